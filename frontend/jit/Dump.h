// Writing traced programs to files and loading them back (jit::dump / jit::load).
#pragma once

#include <string>

#include "kiln/jit/Trace.h"
#include "mlir/IR/BuiltinOps.h"

namespace kiln::jit {

// Writes a copy of `module` (one func of kiln ops, no state arguments) to `path` in the
// chosen format, constants turned into dense_resource blobs, kiln.name on arguments and
// results, written to a temporary name and renamed. IOError naming the path on failure.
void dumpModule(mlir::ModuleOp module, const std::string& path, const DumpOptions& options,
                const SourceLoc& loc);

}  // namespace kiln::jit

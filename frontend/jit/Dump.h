// Writing traced programs to files and loading them back (jit::dump / jit::load).
#pragma once

#include <string>
#include <string_view>

#include "kiln/jit/Trace.h"
#include "mlir/IR/BuiltinOps.h"

namespace kiln::jit {

// Writes a copy of `module` (one func of kiln ops, no state arguments) to `path` in the
// chosen format, constants turned into dense_resource blobs, kiln.name on arguments and
// results, written to a temporary name and renamed. IOError naming the path on failure.
void dumpModule(mlir::ModuleOp module, const std::string& path, const DumpOptions& options,
                const SourceLoc& loc);

// kiln-run takes an input's name as a flag (--input NAME=FILE) and writes an output to
// DIR/NAME.npy, so a name is not empty and has no '/', '=' or NUL: dump() writes no other
// names and load() refuses a file that holds one (kUnusableName says why).
bool isUsableName(std::string_view name);
inline constexpr const char* kUnusableName =
    "is not usable as a file name and flag (empty, or has '/', '=' or NUL)";

}  // namespace kiln::jit

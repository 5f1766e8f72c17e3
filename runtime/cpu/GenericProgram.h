// A program with `?` dims compiled once for the CPU, for every size (docs/ARCHITECTURE.md,
// "Dynamic shapes"). Planning (simplify, fuse, outline) runs once on the `?` program; each
// fused kernel is lowered once with its `?` dims and called through MLIR memref
// descriptors, so it reads its sizes at run time. A call with new argument shapes only
// specializes a copy of the planned host (sizes folded; each kernel's result shapes
// inferred), plans its memory (kiln-plan-memory) and follows that plan from C++
// (runtime::ScheduledProgram): no code is generated per shape.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "runtime/Backend.h"
#include "runtime/HostCallbacks.h"
#include "runtime/cache/DiskCache.h"

namespace kiln::runtime::cpu {

// `main` compiled once for all of its sizes, or null with `why` set where a kernel does not
// lower with `?` dims (the caller then compiles per shape). `main` and `callbacks` must
// outlive the result. Other failures are CompileErrors naming `op`. The plan and the
// kernels' object are kept in `cache` (null: DiskCache::global()) under a key that, as
// Executable's, leaves out names and source lines, and a later compile of the same program
// (in this process or another) loads them instead of compiling.
std::shared_ptr<const ShapeGenericProgram> compileGeneric(mlir::func::FuncOp main,
                                                          const CallbackTable* callbacks,
                                                          const CompileRequest& request,
                                                          std::string_view op, const SourceLoc& loc,
                                                          std::string& why,
                                                          const DiskCache* cache = nullptr);

}  // namespace kiln::runtime::cpu

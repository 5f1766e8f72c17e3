// The reference interpreter: runs a function of kiln ops with the eager kernels of the op
// table, so its results are bitwise those of the eager run of the same ops. The oracle
// that compiled programs are tested against, and kiln-run's fallback.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kiln/core/Error.h"
#include "kiln/core/Tensor.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "runtime/HostCallbacks.h"

namespace kiln::interp {

// Runs `main` on `arguments` (in order, checked against its type) and returns its results
// (in order). Every op runs through kiln::dispatch under NoGradGuard with no dispatch
// hook installed, even when called inside a trace. Handles kiln.constant (dense and
// dense_resource), every op with a table entry (bridge::tableCallFor), kiln.fusion (its body
// with its inputs), kiln.callback (through `callbacks`) and func.return.
//
// Results may share storage with arguments or with each other where the eager op is a
// view (reshape, transpose, expand, slice), exactly as eagerly; copy before writing one
// back into a state buffer.
//
// Errors are kiln::Error (the eager kernels' ShapeError/TypeError keep their kind), named
// `interpret`, one line, with the op and its location:
//   kiln::interpret: 'kiln.callback' at model.mlir:4:10: callee 3 is not in the callback
//   table (2 entries) (at <caller>:<line>)
// Also: a function that does not verify, arguments of the wrong count, shape or dtype,
// ops without a table entry, callbacks returning the wrong types.
std::vector<Tensor> interpret(mlir::func::FuncOp main, std::span<const Tensor> arguments,
                              const runtime::CallbackTable* callbacks = nullptr,
                              const SourceLoc& loc = SourceLoc::current());

// interpret without running the verifier first, for callers that verified `main` once
// (the tracer when it finishes a recording, jit::load when it parses) and run it per call.
std::vector<Tensor> interpretVerified(mlir::func::FuncOp main, std::span<const Tensor> arguments,
                                      const runtime::CallbackTable* callbacks = nullptr,
                                      const SourceLoc& loc = SourceLoc::current());

}  // namespace kiln::interp

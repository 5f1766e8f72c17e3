// The op table: every primitive op the dispatcher runs, by family. Adding an op means
// adding its OpDef here and its kiln dialect op; nothing else (docs/ARCHITECTURE.md §2).
#pragma once

#include <span>

#include "kiln/core/OpDef.h"

namespace kiln::ops {

// Elementwise (ops/Elementwise.cpp)
extern const OpDef kNeg, kAbs, kExp, kLog, kSqrt, kRsqrt, kTanh, kSigmoid, kRelu, kSin, kCos, kFloor, kNot;
extern const OpDef kAdd, kSub, kMul, kDiv, kPow, kMax, kMin, kAnd, kOr;
extern const OpDef kCompare;  // attr "direction": eq ne lt le gt ge
extern const OpDef kSelect;
extern const OpDef kConvert;  // attr "dtype"

// Views and data movement (ops/Views.cpp)
extern const OpDef kReshape;    // attr "shape"
extern const OpDef kTranspose;  // attr "permutation"
extern const OpDef kExpand;     // attrs "dims", "shape" (kiln.broadcast_in_dim)
extern const OpDef kSlice;      // attrs "start", "limit", "stride"
extern const OpDef kConcat;     // attr "dim"
extern const OpDef kCopy;       // contiguous/clone: a value identity (kiln.reshape, same shape)

// Reductions (ops/Reduce.cpp): attrs "kind" (sum mean max min prod), "dims", "keep_dims"
extern const OpDef kReduce;

// Factories (ops/Factories.cpp): attrs "shape", "value", "dtype" (kiln.constant splat)
extern const OpDef kFull;

// Random and sequences (ops/Random.cpp)
extern const OpDef kRng;   // attrs "distribution", "shape", "dtype", "a", "b"; outputs sample, key
extern const OpDef kIota;  // attrs "start", "step", ["end"], "shape", "dtype" (kiln.constant)

// Indexing (ops/Indexing.cpp)
extern const OpDef kGather;      // attr "dim": numpy.take along dim
extern const OpDef kScatterAdd;  // attrs "dim", "size": take's adjoint, summing into zeros

// Linear algebra (ops/Linalg.cpp): oneDNN on CPU
extern const OpDef kMatmul;  // attrs "transpose_a", "transpose_b"
extern const OpDef kAddmm;   // attrs "transpose_a", "transpose_b", "relu"

// Convolution and pooling (ops/Conv.cpp): oneDNN for f32 on CPU
extern const OpDef kConv2d;  // attrs "stride", "padding" [t, b, l, r], "dilation", "groups"
extern const OpDef kPool2d;  // attrs "kind" (max avg), "window", "stride", "padding"

// Activations (ops/Activations.cpp)
extern const OpDef kGelu;  // exact (erf) form; the tanh form is composed

// Every op above, for the tracer's coverage check and for tests.
std::span<const OpDef* const> allOps();

}  // namespace kiln::ops

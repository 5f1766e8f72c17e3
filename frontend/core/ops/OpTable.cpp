// The list of every op in the table (see OpTable.h).
#include "frontend/core/ops/OpTable.h"

#include <array>

namespace kiln::ops {

std::span<const OpDef* const> allOps() {
  static const std::array kOps = {
      &kNeg, &kAbs, &kExp, &kLog, &kSqrt, &kRsqrt, &kTanh, &kSigmoid, &kRelu, &kSin, &kCos,
      &kFloor, &kNot, &kAdd, &kSub, &kMul, &kDiv, &kPow, &kMax, &kMin, &kAnd, &kOr,
      &kCompare, &kSelect, &kConvert, &kReshape, &kTranspose, &kExpand, &kSlice, &kConcat,
      &kCopy, &kReduce, &kFull, &kRng, &kIota, &kGather, &kScatterAdd, &kMatmul, &kAddmm, &kConv2d,
      &kPool2d, &kGelu};
  return kOps;
}

}  // namespace kiln::ops

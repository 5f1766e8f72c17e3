// Elementwise ops on CUDA tensors: one generated kernel per op, dtypes and layout (strided,
// or every operand contiguous), a grid-stride loop over the output's elements. Each op's
// expression is the CPU kernel's (ops/Elementwise.cpp), in the same math type.
#include <map>

#include "frontend/core/cuda/Codegen.h"
#include "frontend/core/cuda/Kernels.h"
#include "frontend/core/cuda/Nvrtc.h"
#include "frontend/core/ops/OpTable.h"

namespace kiln::cuda {

namespace {

// The expression of `op` over the loaded operands a, b, c (in math type M), or "" if the
// op is not elementwise. `attrs` picks the compare direction.
std::string expression(const OpDef& op, const Attrs& attrs, DType in, DType out) {
  using namespace ops;
  const bool integral = !isFloatingPoint(in) && in != kBool;
  static const std::map<const OpDef*, std::string> kExpr = {
      {&kNeg, "-a"},
      {&kAbs, "(a < (M)0 ? -a : (a == (M)0 ? (M)0 : a))"},
      {&kExp, "exp(a)"},
      {&kLog, "log(a)"},
      {&kSqrt, "sqrt(a)"},
      {&kRsqrt, "(M)1 / sqrt(a)"},
      {&kTanh, "tanh(a)"},
      {&kSigmoid, "(M)1 / ((M)1 + exp(-a))"},
      {&kRelu, "((a != a || a > (M)0) ? a : (M)0)"},
      {&kSin, "sin(a)"},
      {&kCos, "cos(a)"},
      {&kFloor, "floor(a)"},
      {&kNot, "!a"},
      {&kGelu, "(M)0.5 * a * ((M)1 + erf(a * (M)0.70710678118654752440))"},
      {&kAdd, "a + b"},
      {&kSub, "a - b"},
      {&kMul, "a * b"},
      {&kDiv, "a / b"},
      {&kMax, "((a != a) ? a : (b != b) ? b : (a > b ? a : b))"},
      {&kMin, "((a != a) ? a : (b != b) ? b : (a < b ? a : b))"},
      {&kAnd, "a && b"},
      {&kOr, "a || b"},
      {&kSelect, "c0 ? a : b"},
      {&kCopy, "a"},
  };
  if (&op == &kPow) return integral ? "ipow<M>(a, b)" : "pow(a, b)";
  if (&op == &kCompare) {
    static const std::map<std::string, std::string> kDir = {{"eq", "=="}, {"ne", "!="}, {"lt", "<"},
                                                            {"le", "<="}, {"gt", ">"},  {"ge", ">="}};
    return "a " + kDir.at(attrs.get<std::string>("direction")) + " b";
  }
  if (&op == &kConvert) return out == kBool ? "a != (M)0" : std::string("(") + mathType(out) + ")(a)";
  auto it = kExpr.find(&op);
  return it == kExpr.end() ? "" : it->second;
}

struct Signature {
  std::string name, source;
};

// The kernel for `op` with value operands of dtype `in` (the select's condition is bool),
// output `out`, `arity` inputs.
// Names every input of generate() below but the arity, which the op fixes.
std::string kernelName(const OpDef& op, const Attrs& attrs, DType in, DType out, bool contiguous) {
  std::string name = std::string("kiln_") + std::string(op.name) + "_" + shortName(in) + "_" + shortName(out) +
                     (contiguous ? "_c" : "_s");
  if (&op == &ops::kCompare) name += "_" + attrs.get<std::string>("direction");
  return name;
}

Signature generate(const OpDef& op, const Attrs& attrs, DType in, DType out, int arity, bool contiguous) {
  const bool select = &op == &ops::kSelect;
  const std::string name = kernelName(op, attrs, in, out, contiguous);
  std::string src = prelude();
  src += "typedef " + std::string(mathType(in)) + " M;\n";
  src += "extern \"C\" __global__ void " + name + "(" + storageType(out) + "* out";
  std::vector<std::string> names = select ? std::vector<std::string>{"c0", "a", "b"}
                                          : std::vector<std::string>{"a", "b", "c"};
  for (int k = 0; k < arity; ++k) {
    const DType t = select && k == 0 ? kBool : in;
    src += std::string(", const ") + storageType(t) + "* in" + std::to_string(k);
  }
  src += ", Geometry g, i64 n) {\n";
  src += "  for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (i64)gridDim.x * blockDim.x) {\n";
  if (contiguous) {
    src += "    i64 off[" + std::to_string(arity + 1) + "];\n";
    src += "    for (int k = 0; k <= " + std::to_string(arity) + "; ++k) off[k] = i;\n";
  } else {
    src += "    i64 off[" + std::to_string(arity + 1) + "];\n";
    src += "    offsets<" + std::to_string(arity + 1) + ">(g, i, off);\n";
  }
  for (int k = 0; k < arity; ++k) {
    const DType t = select && k == 0 ? kBool : in;
    src += "    const " + std::string(select && k == 0 ? "bool" : "M") + " " + names[k] + " = " +
           loadAs(t, "in" + std::to_string(k) + "[off[" + std::to_string(k + 1) + "]]") + ";\n";
  }
  src += "    out[off[0]] = " + storeAs(out, expression(op, attrs, in, out)) + ";\n";
  src += "  }\n}\n";
  return {name, src};
}

void launchElementwise(const OpDef& op, const Attrs& attrs, const Tensor& out,
                       std::span<const Tensor> inputs, const SourceLoc& loc) {
  const int index = out.device().index;
  const DType in = inputs.empty() ? out.dtype() : inputs[&op == &ops::kSelect ? 1 : 0].dtype();
  std::vector<const Tensor*> operands{&out};
  for (const Tensor& x : inputs) operands.push_back(&x);
  bool contiguous = false;
  Geometry g = geometryOf(operands, contiguous, op.name, loc);
  const int arity = int(inputs.size());
  const std::string name = kernelName(op, attrs, in, out.dtype(), contiguous);
  CUfunction f = kernel(
      index, name, [&] { return generate(op, attrs, in, out.dtype(), arity, contiguous).source; }, op.name, loc);
  int64_t n = out.numel();
  std::vector<void*> pointers{out.rawData()};
  for (const Tensor& x : inputs) pointers.push_back(x.rawData());
  std::vector<void*> args;
  for (void*& p : pointers) args.push_back(&p);
  args.push_back(&g);
  args.push_back(&n);
  Launch l = gridFor(n, index, op.name, loc);
  launch(index, f, {l.blocks}, {l.threads}, 0, args.data(), op.name, loc);
}

// full: the value is a kernel parameter, so one kernel per dtype serves every value.
Signature fillKernel(DType out) {
  const std::string name = std::string("kiln_full_") + shortName(out);
  std::string src = prelude();
  src += "extern \"C\" __global__ void " + name + "(" + storageType(out) +
         "* out, double value, i64 exact, int useExact, i64 n) {\n";
  src += "  const " + std::string(storageType(out)) + " v = useExact ? (" + storageType(out) + ")exact : " +
         storeAs(out, std::string("(") + mathType(out) + ")value") + ";\n";
  src += "  for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (i64)gridDim.x * blockDim.x)\n";
  src += "    out[i] = v;\n}\n";
  return {name, src};
}

void fill(const Tensor& out, const Attrs& attrs, const SourceLoc& loc) {
  const int index = out.device().index;
  const int64_t* exact = attrs.getIf<int64_t>("value");
  double value = exact ? double(*exact) : attrs.get<double>("value");
  long long exactValue = exact ? *exact : 0;
  int useExact = exact && !isFloatingPoint(out.dtype()) && out.dtype() != kBool ? 1 : 0;
  CUfunction f = kernel(index, std::string("kiln_full_") + shortName(out.dtype()),
                        [&] { return fillKernel(out.dtype()).source; }, "full", loc);
  void* data = out.rawData();
  int64_t n = out.numel();
  void* args[] = {&data, &value, &exactValue, &useExact, &n};
  Launch l = gridFor(n, index, "full", loc);
  launch(index, f, {l.blocks}, {l.threads}, 0, args, "full", loc);
}

}  // namespace

std::string elementwiseExpression(const OpDef& op, const Attrs& attrs, DType in, DType out) {
  if (&op == &ops::kFull) return "";
  return expression(op, attrs, in, out);
}

bool isElementwise(const OpDef& op) {
  return &op == &ops::kFull || &op == &ops::kPow || &op == &ops::kCompare || &op == &ops::kConvert ||
         !expression(op, Attrs{}, kFloat32, kFloat32).empty();
}

void elementwise(const OpDef& op, const OpArgs& args, std::span<Tensor> outputs) {
  if (&op == &ops::kFull) return fill(outputs[0], args.attrs, args.loc);
  launchElementwise(op, args.attrs, outputs[0], args.inputs, args.loc);
}

void copyValues(const Tensor& dst, const Tensor& src, const SourceLoc& loc) {
  launchElementwise(ops::kCopy, Attrs{}, dst, std::span(&src, 1), loc);
}

void elementwiseSources(std::vector<KernelSource>& out) {
  using namespace ops;
  const std::vector<DType> floating{kFloat32, kFloat64, kFloat16, kBFloat16};
  const std::vector<DType> numeric{kFloat32, kFloat64, kFloat16, kBFloat16, kInt32, kInt64};
  const std::vector<DType> any{kFloat32, kFloat64, kFloat16, kBFloat16, kInt32, kInt64, kBool};
  auto add = [&](const OpDef& op, const Attrs& attrs, DType in, DType o, int arity) {
    for (bool contiguous : {true, false}) {
      Signature s = generate(op, attrs, in, o, arity, contiguous);
      out.push_back({std::string(op.name) + " " + shortName(in) + "->" + shortName(o), s.name, s.source});
    }
  };
  for (const OpDef* op : {&kExp, &kLog, &kSqrt, &kRsqrt, &kTanh, &kSigmoid, &kSin, &kCos, &kFloor, &kGelu})
    for (DType t : floating) add(*op, {}, t, t, 1);
  for (const OpDef* op : {&kNeg, &kAbs, &kRelu})
    for (DType t : numeric) add(*op, {}, t, t, 1);
  add(kNot, {}, kBool, kBool, 1);
  for (const OpDef* op : {&kSub, &kPow}) for (DType t : numeric) add(*op, {}, t, t, 2);
  for (DType t : floating) add(kDiv, {}, t, t, 2);
  for (const OpDef* op : {&kAdd, &kMul, &kMax, &kMin}) for (DType t : any) add(*op, {}, t, t, 2);
  for (const OpDef* op : {&kAnd, &kOr}) add(*op, {}, kBool, kBool, 2);
  for (const char* dir : {"eq", "ne", "lt", "le", "gt", "ge"})
    for (DType t : any) add(kCompare, {{"direction", std::string(dir)}}, t, kBool, 2);
  for (DType t : any) add(kSelect, {}, t, t, 3);
  for (DType t : any) add(kCopy, {}, t, t, 1);
  for (DType from : any)
    for (DType to : any)
      if (from != to) add(kConvert, {{"dtype", to}}, from, to, 1);
  for (DType t : any) {
    Signature s = fillKernel(t);
    out.push_back({std::string("full ") + shortName(t), s.name, s.source});
  }
}

}  // namespace kiln::cuda

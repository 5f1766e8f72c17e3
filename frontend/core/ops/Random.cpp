// Random and sequence factories: the rng op of the op table (kiln.rng, counter-based
// Philox keyed by [seed, offset]) and the iota op (arange/linspace, kiln.constant).
#include <cmath>

#include "frontend/core/kernels/Copy.h"
#include "frontend/core/ops/OpTable.h"
#include "frontend/core/ops/ShapeRules.h"
#include "kiln/core/Dispatcher.h"
#include "kiln/core/Ops.h"
#include "kiln/core/Random.h"

namespace kiln {
namespace ops {
namespace {

std::vector<TensorMeta> rngShape(const OpDef& op, std::span<const TensorMeta> in,
                                 const Attrs& attrs, const SourceLoc& loc) {
  if (in[0].dtype != kInt64 || in[0].shape != Shape{2})
    throw TypeError::make(loc, op.name, "the key must be an int64 tensor of shape [2], got ",
                          in[0].dtype, " of shape ", in[0].shape);
  const Shape& shape = attrs.get<Shape>("shape");
  checkedNumel(shape, op.name, loc);
  const std::string& dist = attrs.get<std::string>("distribution");
  const DType dtype = attrs.get<DType>("dtype");
  const double a = attrs.get<double>("a"), b = attrs.get<double>("b");
  if (dist != "bernoulli" && !isFloatingPoint(dtype))
    throw TypeError::make(loc, op.name, "distribution '", dist, "' needs a floating-point dtype, got ", dtype);
  const bool valid = dist == "uniform" ? a <= b : dist == "normal" ? b >= 0 : a >= 0 && a <= 1;
  if (!valid)
    throw Error::make(loc, op.name, "parameters a = ", a, ", b = ", b, " are out of range for distribution '",
                      dist, "' (uniform: a <= b, normal: b >= 0, bernoulli: 0 <= a <= 1)");
  return {TensorMeta{shape, dtype, in[0].device}, in[0]};
}

// Draws `n` uniforms (distribution "uniform"/"bernoulli") or normals in f32 or f64, per
// the stream layout in Random.h, then maps them to the distribution in OpMath.
template <class Draw>
void drawInto(const std::string& dist, const Generator& at, std::vector<Draw>& values) {
  if (dist == "normal") fillNormal(at, values);
  else fillUniform(at, values);
}

void rngKernel(const OpArgs& args, std::span<Tensor> out) {
  const Tensor keyValues = kernels::contiguousValues(args.inputs[0], args.loc);
  const int64_t* key = static_cast<const int64_t*>(keyValues.rawData());
  const Generator at{uint64_t(key[0]), uint64_t(key[1])};
  const std::string& dist = args.attrs.get<std::string>("distribution");
  const double a = args.attrs.get<double>("a"), b = args.attrs.get<double>("b");
  const size_t n = size_t(out[0].numel());
  const bool wide = out[0].dtype() == kFloat64;
  auto emit = [&](auto& values) {
    drawInto(dist, at, values);
    dispatchDType(out[0].dtype(), [&]<class T>() {
      T* dst = static_cast<T*>(out[0].rawData());
      for (size_t i = 0; i < n; ++i) {
        double v = double(values[i]);
        double r = dist == "uniform" ? a + (b - a) * v : dist == "normal" ? a + b * v : double(v < a);
        dst[i] = T(static_cast<OpMathType<T>>(r));
      }
    });
  };
  uint64_t blocks;
  if (wide) {
    std::vector<double> values(n);
    emit(values);
    blocks = philoxBlocks<double>(n);
  } else {
    std::vector<float> values(n);
    emit(values);
    blocks = philoxBlocks<float>(n);
  }
  int64_t* next = static_cast<int64_t*>(out[1].rawData());
  next[0] = key[0];
  next[1] = int64_t(at.offset + blocks);
}

// arange: start + i * step. linspace ("end" given): filled from both ends, as PyTorch,
// so the last element is exactly `end`.
void iotaKernel(const OpArgs& args, std::span<Tensor> out) {
  const double start = args.attrs.get<double>("start"), step = args.attrs.get<double>("step");
  const int64_t n = out[0].numel();
  const bool linspace = args.attrs.has("end");
  const double end = linspace ? args.attrs.get<double>("end") : 0.0;
  dispatchDType(out[0].dtype(), [&]<class T>() {
    T* dst = static_cast<T*>(out[0].rawData());
    for (int64_t i = 0; i < n; ++i) {
      double v = (linspace && n > 1 && i >= n / 2) ? end - step * double(n - 1 - i) : start + step * double(i);
      dst[i] = T(static_cast<OpMathType<T>>(v));
    }
  });
}

}  // namespace

const OpDef kRng{"rng", "kiln.rng", rngShape, rngKernel, nullptr, nullptr};
const OpDef kIota{"arange", "kiln.constant", factoryShape, iotaKernel, nullptr, nullptr};

}  // namespace ops

namespace detail {

// The default generator's state viewed as the int64 [seed, offset] key tensor.
const Tensor& defaultRngKey() {
  static const Tensor key = [] {
    auto impl = std::make_shared<TensorImpl>();
    impl->storage = defaultGeneratorStorage();
    impl->shape = {2};
    impl->strides = {1};
    impl->dtype = kInt64;
    return Tensor(std::move(impl));
  }();
  return key;
}

}  // namespace detail

namespace {

Tensor sampleOnCpu(const char* dist, Shape shape, DType dtype, double a, double b, const SourceLoc& loc) {
  Attrs attrs{{"distribution", std::string(dist)}, {"shape", shape}, {"dtype", dtype}, {"a", a}, {"b", b}};
  if (!currentDispatchHook()) {
    // Eager: reserve the blocks atomically, so concurrent draws never share a counter.
    const uint64_t n = uint64_t(numel(shape));
    Generator at = reserveDefault(dtype == kFloat64 ? philoxBlocks<double>(n) : philoxBlocks<float>(n));
    Tensor key = tensor(std::vector<int64_t>{int64_t(at.seed), int64_t(at.offset)}, std::nullopt, loc);
    return dispatch(ops::kRng, {key}, attrs, loc)[0];
  }
  // Traced: the key is state, read and updated in place, so every call draws anew.
  const Tensor& key = detail::defaultRngKey();
  std::vector<Tensor> outs = dispatch(ops::kRng, {key}, attrs, loc);
  dispatchInPlace(ops::kCopy, key, {outs[1]}, {{"shape", Shape{2}}}, loc);
  return outs[0];
}

// Drawn on the CPU from the one Philox stream and copied to the device: the same seed
// gives the same numbers on every device.
Tensor sample(const char* dist, Shape shape, DType dtype, double a, double b, Device device,
              const SourceLoc& loc) {
  detail::FactoryDeviceGuard onCpu(kCPU);
  Tensor values = sampleOnCpu(dist, std::move(shape), dtype, a, b, loc);
  return device.isCPU() ? values : values.to(device, loc);
}

void requireFloating(const char* op, DType dtype, const SourceLoc& loc) {
  if (!isFloatingPoint(dtype))
    throw TypeError::make(loc, op, "expects a floating-point dtype, got ", dtype);
}

}  // namespace

Tensor rand(Shape shape, TensorOptions options, const SourceLoc& loc) {
  const DType dtype = options.dtype_or(kFloat32);
  requireFloating("rand", dtype, loc);
  return detail::withRequiresGrad(
      sample("uniform", std::move(shape), dtype, 0.0, 1.0, options.device(), loc), options, loc);
}

Tensor randn(Shape shape, TensorOptions options, const SourceLoc& loc) {
  const DType dtype = options.dtype_or(kFloat32);
  requireFloating("randn", dtype, loc);
  return detail::withRequiresGrad(
      sample("normal", std::move(shape), dtype, 0.0, 1.0, options.device(), loc), options, loc);
}

Tensor bernoulli(Shape shape, double p, TensorOptions options, const SourceLoc& loc) {
  if (!(p >= 0.0 && p <= 1.0))
    throw Error::make(loc, "bernoulli", "p must be in [0, 1], got ", p);
  return sample("bernoulli", std::move(shape), options.dtype_or(kFloat32), p, 0.0, options.device(), loc);
}

// floor(low + u (high - low)) with u a float64 uniform in [0, 1): exact for ranges below
// 2^53, and made of primitives so a trace records it.
Tensor randint(int64_t low, int64_t high, Shape shape, TensorOptions options, const SourceLoc& loc) {
  if (high <= low)
    throw Error::make(loc, "randint", "high (", high, ") must be greater than low (", low, ")");
  Tensor u = sample("uniform", std::move(shape), kFloat64, double(low), double(high), kCPU, loc);
  Tensor values = convert(floor(u, loc), options.dtype_or(kInt64), loc);
  return options.device().isCPU() ? values : values.to(options.device(), loc);
}

Tensor detail::arangeImpl(double start, double end, double step, DType dtype, const SourceLoc& loc) {
  if (step == 0 || !std::isfinite(start) || !std::isfinite(end) || (end - start) / step < 0)
    throw Error::make(loc, "arange", "cannot step from ", start, " to ", end, " by ", step);
  const int64_t n = int64_t(std::ceil((end - start) / step));
  return dispatch1(ops::kIota, {},
                   {{"start", start}, {"step", step}, {"shape", Shape{n}}, {"dtype", dtype}}, loc);
}

Tensor arange(int64_t end, const SourceLoc& loc) { return detail::arangeImpl(0.0, double(end), 1.0, kInt64, loc); }

Tensor linspace(double start, double end, int64_t steps, DType dtype, const SourceLoc& loc) {
  if (steps < 0) throw Error::make(loc, "linspace", "steps must be non-negative, got ", steps);
  const double step = steps > 1 ? (end - start) / double(steps - 1) : 0.0;
  return dispatch1(ops::kIota, {},
                   {{"start", start}, {"step", step}, {"end", end}, {"shape", Shape{steps}}, {"dtype", dtype}},
                   loc);
}

}  // namespace kiln

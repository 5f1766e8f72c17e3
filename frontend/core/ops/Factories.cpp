// The fill op of the op table (kiln.constant splat) and the public factories.
#include <algorithm>
#include <cstring>

#include "frontend/core/kernels/Map.h"
#include "kiln/core/Dispatcher.h"
#include "kiln/core/Ops.h"
#include "frontend/core/ops/OpTable.h"
#include "frontend/core/ops/ShapeRules.h"

namespace kiln {
namespace ops {
namespace {

// "value" is a double, or an int64 when an integer constant must keep all 64 bits.
void fullKernel(const OpArgs& args, std::span<Tensor> out) {
  const int64_t* exact = args.attrs.getIf<int64_t>("value");
  const double value = exact ? double(*exact) : args.attrs.get<double>("value");
  dispatchDType(out[0].dtype(), [&]<class T>() {
    T v = T(static_cast<OpMathType<T>>(value));
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
      if (exact) v = T(*exact);
    T* dst = static_cast<T*>(out[0].rawData());
    parallelFor(0, out[0].numel(), kernels::kElementwiseGrain, [&](int64_t b, int64_t e) {
      std::fill(dst + b, dst + e, v);
    });
  });
}

}  // namespace

const OpDef kFull{"full", "kiln.constant", factoryShape, fullKernel, nullptr, nullptr, kReadsBoth, true};

}  // namespace ops

Tensor detail::withRequiresGrad(Tensor x, const TensorOptions& options, const SourceLoc& loc) {
  if (options.requires_grad()) x.requires_grad_(true, loc);
  return x;
}

Tensor full(Shape shape, double value, TensorOptions options, const SourceLoc& loc) {
  detail::FactoryDeviceGuard onDevice(options.device());
  Tensor x = dispatch1(ops::kFull, {},
                       {{"shape", std::move(shape)}, {"value", value}, {"dtype", options.dtype_or(kFloat32)}},
                       loc);
  return detail::withRequiresGrad(std::move(x), options, loc);
}
Tensor detail::fullExact(Shape shape, int64_t value, DType dtype, const SourceLoc& loc) {
  return dispatch1(ops::kFull, {}, {{"shape", std::move(shape)}, {"value", value}, {"dtype", dtype}},
                   loc);
}
// Uninitialized in PyTorch; zeros here, so a trace records a defined constant.
Tensor empty(Shape shape, TensorOptions options, const SourceLoc& loc) { return full(std::move(shape), 0.0, options, loc); }
Tensor zeros(Shape shape, TensorOptions options, const SourceLoc& loc) { return full(std::move(shape), 0.0, options, loc); }
Tensor ones(Shape shape, TensorOptions options, const SourceLoc& loc) { return full(std::move(shape), 1.0, options, loc); }
namespace {
TensorOptions like(const Tensor& x) { return TensorOptions(x.dtype()).device(x.device()); }
}  // namespace
Tensor zeros_like(const Tensor& x, const SourceLoc& loc) { return full(x.sizes(), 0.0, like(x), loc); }
Tensor ones_like(const Tensor& x, const SourceLoc& loc) { return full(x.sizes(), 1.0, like(x), loc); }
Tensor full_like(const Tensor& x, double value, const SourceLoc& loc) { return full(x.sizes(), value, like(x), loc); }
// On the device of the factory guard: a scalar operand lands where its op runs.
Tensor scalar_tensor(double value, DType dtype, const SourceLoc& loc) {
  return full({}, value, TensorOptions(dtype).device(detail::factoryDevice()), loc);
}

template <Arithmetic T>
Tensor tensor(const std::vector<T>& values, std::optional<Shape> shape, const SourceLoc& loc) {
  Shape resolved = shape.value_or(Shape{int64_t(values.size())});
  if (numel(resolved) != int64_t(values.size()))
    throw ShapeError::make(loc, "tensor", values.size(), " values do not fill shape ", resolved);
  using Stored = std::conditional_t<std::is_same_v<T, bool>, bool,
                 std::conditional_t<std::is_floating_point_v<T>, T,
                 std::conditional_t<(sizeof(T) <= 4), int32_t, int64_t>>>;
  Tensor out = detail::emptyTensor(resolved, dtypeOf<Stored>(), kCPU, false, loc);
  Stored* dst = static_cast<Stored*>(out.rawData());
  for (size_t i = 0; i < values.size(); ++i) dst[i] = Stored(values[i]);
  return out;
}

template Tensor tensor(const std::vector<float>&, std::optional<Shape>, const SourceLoc&);
template Tensor tensor(const std::vector<double>&, std::optional<Shape>, const SourceLoc&);
template Tensor tensor(const std::vector<int32_t>&, std::optional<Shape>, const SourceLoc&);
template Tensor tensor(const std::vector<int64_t>&, std::optional<Shape>, const SourceLoc&);
template Tensor tensor(const std::vector<bool>&, std::optional<Shape>, const SourceLoc&);

namespace detail {

TensorDataContainer::TensorDataContainer(std::initializer_list<TensorDataContainer> list)
    : shape_{int64_t(list.size())}, kind_(ScalarKind::Bool) {
  if (list.size() == 0) kind_ = ScalarKind::Floating;  // torch::tensor({}) is float, [0]
  for (const TensorDataContainer& item : list) {
    if (!item.error_.empty() && error_.empty()) error_ = item.error_;
    if (item.shape_ != list.begin()->shape_ && error_.empty())
      error_ = "a nested list is ragged: an element of shape " + formatShape(item.shape_) +
               " beside one of shape " + formatShape(list.begin()->shape_);
    kind_ = std::max(kind_, item.kind_);
    values_.insert(values_.end(), item.values_.begin(), item.values_.end());
  }
  if (list.size() > 0) shape_.insert(shape_.end(), list.begin()->shape_.begin(), list.begin()->shape_.end());
}

}  // namespace detail

// The values go through the vector factory of their kind, then to the dtype and device asked.
Tensor tensor(const detail::TensorDataContainer& data, TensorOptions options, const SourceLoc& loc) {
  if (!data.error().empty()) throw ShapeError::make(loc, "tensor", data.error());
  Tensor x;
  if (data.kind() == ScalarKind::Floating) {
    std::vector<double> values;
    for (const Scalar& v : data.values()) values.push_back(v.toDouble());
    x = tensor(values, data.shape(), loc).to(options.dtype_or(kDefaultFloat), loc);
  } else if (data.kind() == ScalarKind::Integral) {
    std::vector<int64_t> values;
    for (const Scalar& v : data.values()) values.push_back(v.toLong());
    x = tensor(values, data.shape(), loc).to(options.dtype_or(kInt64), loc);
  } else {
    std::vector<bool> values;
    for (const Scalar& v : data.values()) values.push_back(v.toBool());
    x = tensor(values, data.shape(), loc).to(options.dtype_or(kBool), loc);
  }
  if (x.device() != options.device()) x = x.to(options.device(), loc);
  return detail::withRequiresGrad(std::move(x), options, loc);
}

Tensor from_blob(void* data, Shape shape, DType dtype, const SourceLoc& loc) {
  const int64_t n = checkedNumel(shape, "from_blob", loc);
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = Storage::fromBlob(data, size_t(n) * elementSize(dtype));
  impl->strides = contiguousStrides(shape);
  impl->shape = std::move(shape);
  impl->dtype = dtype;
  return Tensor(std::move(impl));
}

}  // namespace kiln

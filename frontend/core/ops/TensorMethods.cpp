// LibTorch's method spellings (x.sum(1), x.mm(w), x += y, x.item()): each forwards to the
// free function or in-place method that implements it (see kiln/core/Tensor.h).
#include "kiln/core/Functional.h"
#include "kiln/core/Ops.h"
#include "kiln/core/Tensor.h"

namespace kiln {

// ---- elementwise ------------------------------------------------------------------------
#define KILN_UNARY_METHOD(name) \
  Tensor Tensor::name(const SourceLoc& loc) const { return kiln::name(*this, loc); }
KILN_FOR_EACH_UNARY_OP(KILN_UNARY_METHOD)
#undef KILN_UNARY_METHOD

namespace {
// other·alpha, leaving other alone when alpha is 1.
Tensor scaled(const Tensor& other, const Scalar& alpha, const SourceLoc& loc) {
  if (alpha.isIntegral(true) && alpha.toLong() == 1) return other;
  return mul(other, alpha, loc);
}
}  // namespace

Tensor Tensor::add(const Tensor& other, const Scalar& alpha, const SourceLoc& loc) const {
  return kiln::add(*this, scaled(other, alpha, loc), loc);
}
Tensor Tensor::add(const Scalar& other, const Scalar& alpha, const SourceLoc& loc) const {
  return add(scalarOperand(*this, other, loc), alpha, loc);
}
Tensor Tensor::sub(const Tensor& other, const Scalar& alpha, const SourceLoc& loc) const {
  return kiln::sub(*this, scaled(other, alpha, loc), loc);
}
Tensor Tensor::sub(const Scalar& other, const Scalar& alpha, const SourceLoc& loc) const {
  return sub(scalarOperand(*this, other, loc), alpha, loc);
}

#define KILN_BINARY_METHOD(name)                                                       \
  Tensor Tensor::name(const Tensor& other, const SourceLoc& loc) const {               \
    return kiln::name(*this, other, loc);                                              \
  }                                                                                    \
  Tensor Tensor::name(const Scalar& other, const SourceLoc& loc) const {               \
    return kiln::name(*this, other, loc);                                              \
  }
KILN_FOR_EACH_SCALAR_BINARY_OP(KILN_BINARY_METHOD)
#undef KILN_BINARY_METHOD

Tensor Tensor::logical_and(const Tensor& other, const SourceLoc& loc) const {
  return kiln::logical_and(*this, other, loc);
}
Tensor Tensor::logical_or(const Tensor& other, const SourceLoc& loc) const {
  return kiln::logical_or(*this, other, loc);
}
Tensor Tensor::where(const Tensor& condition, const Tensor& other, const SourceLoc& loc) const {
  return kiln::where(condition, *this, other, loc);
}
Tensor Tensor::clamp(std::optional<double> min, std::optional<double> max, const SourceLoc& loc) const {
  return kiln::clamp(*this, min, max, loc);
}
Tensor Tensor::clamp_min(double min, const SourceLoc& loc) const { return kiln::clamp(*this, min, std::nullopt, loc); }
Tensor Tensor::clamp_max(double max, const SourceLoc& loc) const { return kiln::clamp(*this, std::nullopt, max, loc); }
Tensor Tensor::softmax(int64_t dim, const SourceLoc& loc) const { return kiln::softmax(*this, dim, loc); }
Tensor Tensor::log_softmax(int64_t dim, const SourceLoc& loc) const { return kiln::log_softmax(*this, dim, loc); }
Tensor Tensor::type_as(const Tensor& other, const SourceLoc& loc) const { return to(other.dtype(), loc); }

// ---- in place ---------------------------------------------------------------------------
Tensor& Tensor::operator+=(Located other) { return add_(other.tensor, 1.0, other.loc); }
Tensor& Tensor::operator-=(Located other) { return sub_(other.tensor, 1.0, other.loc); }
Tensor& Tensor::operator*=(Located other) { return mul_(other.tensor, other.loc); }
Tensor& Tensor::operator/=(Located other) { return div_(other.tensor, other.loc); }
Tensor& Tensor::operator+=(LocatedScalar other) {
  return add_(scalarOperand(*this, other.value, other.loc), 1.0, other.loc);
}
Tensor& Tensor::operator-=(LocatedScalar other) {
  return sub_(scalarOperand(*this, other.value, other.loc), 1.0, other.loc);
}
Tensor& Tensor::operator*=(LocatedScalar other) {
  return mul_(scalarOperand(*this, other.value, other.loc), other.loc);
}
Tensor& Tensor::operator/=(LocatedScalar other) {
  return div_(scalarOperand(*this, other.value, other.loc), other.loc);
}

// ---- linear algebra ---------------------------------------------------------------------
Tensor Tensor::mm(const Tensor& other, const SourceLoc& loc) const { return kiln::mm(*this, other, loc); }
Tensor Tensor::matmul(const Tensor& other, const SourceLoc& loc) const { return kiln::matmul(*this, other, loc); }
Tensor Tensor::bmm(const Tensor& other, const SourceLoc& loc) const { return kiln::bmm(*this, other, loc); }
Tensor Tensor::addmm(const Tensor& mat1, const Tensor& mat2, const SourceLoc& loc) const {
  return kiln::addmm(*this, mat1, mat2, loc);
}

// ---- reductions -------------------------------------------------------------------------
#define KILN_REDUCE_METHOD(name)                                                       \
  Tensor Tensor::name(Dims dims, bool keepdim, const SourceLoc& loc) const {           \
    return kiln::name(*this, std::move(dims), keepdim, loc);                           \
  }
KILN_REDUCE_METHOD(sum)
KILN_REDUCE_METHOD(mean)
KILN_REDUCE_METHOD(prod)
KILN_REDUCE_METHOD(amax)
KILN_REDUCE_METHOD(amin)
KILN_REDUCE_METHOD(all)
KILN_REDUCE_METHOD(any)
#undef KILN_REDUCE_METHOD
Tensor Tensor::var(Dims dims, bool unbiased, bool keepdim, const SourceLoc& loc) const {
  return kiln::var(*this, std::move(dims), unbiased ? 1 : 0, keepdim, loc);
}
Tensor Tensor::std(Dims dims, bool unbiased, bool keepdim, const SourceLoc& loc) const {
  return kiln::std(*this, std::move(dims), unbiased ? 1 : 0, keepdim, loc);
}
Tensor Tensor::norm(double p, Dims dims, bool keepdim, const SourceLoc& loc) const {
  return kiln::norm(*this, p, std::move(dims), keepdim, loc);
}
Tensor Tensor::max(const SourceLoc& loc) const { return kiln::max(*this, loc); }
Tensor Tensor::min(const SourceLoc& loc) const { return kiln::min(*this, loc); }
std::tuple<Tensor, Tensor> Tensor::max(int64_t dim, bool keepdim, const SourceLoc& loc) const {
  return kiln::max(*this, dim, keepdim, loc);
}
std::tuple<Tensor, Tensor> Tensor::min(int64_t dim, bool keepdim, const SourceLoc& loc) const {
  return kiln::min(*this, dim, keepdim, loc);
}
Tensor Tensor::max(const Tensor& other, const SourceLoc& loc) const { return kiln::max(*this, other, loc); }
Tensor Tensor::min(const Tensor& other, const SourceLoc& loc) const { return kiln::min(*this, other, loc); }
Tensor Tensor::argmax(std::optional<int64_t> dim, bool keepdim, const SourceLoc& loc) const {
  return kiln::argmax(*this, dim, keepdim, loc);
}
Tensor Tensor::argmin(std::optional<int64_t> dim, bool keepdim, const SourceLoc& loc) const {
  return kiln::argmin(*this, dim, keepdim, loc);
}

// ---- indexing ---------------------------------------------------------------------------
Tensor Tensor::index_select(int64_t dim, const Tensor& index, const SourceLoc& loc) const {
  return kiln::index_select(*this, dim, index, loc);
}
Tensor Tensor::gather(int64_t dim, const Tensor& index, const SourceLoc& loc) const {
  return kiln::gather(*this, dim, index, loc);
}
Tensor Tensor::index_add(int64_t dim, const Tensor& index, const Tensor& source,
                         const SourceLoc& loc) const {
  return kiln::index_add(*this, dim, index, source, loc);
}

// ---- data -------------------------------------------------------------------------------
Scalar Tensor::item(const SourceLoc& loc) const {
  if (defined() && is_floating_point()) return item<double>(loc);
  if (defined() && dtype() == kBool) return item<bool>(loc);
  return item<int64_t>(loc);
}

}  // namespace kiln

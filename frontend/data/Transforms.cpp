// The transforms of Transforms.h, composed from tensor ops so they work on any dtype.
#include "kiln/data/Transforms.h"

#include "kiln/core/Ops.h"
#include "kiln/core/Random.h"

namespace kiln::data::transforms {

namespace {

uint32_t lo32(uint64_t v) { return uint32_t(v); }
uint32_t hi32(uint64_t v) { return uint32_t(v >> 32); }

// The four random words of one example: see SampleKey.
PhiloxCounter draw(uint64_t seed, const SampleKey& key) {
  return philox4x32_10({lo32(key.index), hi32(key.index), lo32(key.epoch), hi32(key.epoch)},
                       {lo32(seed), hi32(seed)});
}

// A number in [0, count) from a uniform 32-bit word (multiply-shift; the bias is below
// count / 2^32, far under what an image offset can show).
int64_t below(uint32_t word, int64_t count) { return int64_t((uint64_t(word) * uint64_t(count)) >> 32); }

void checkImage(const Tensor& x, int64_t minRank, std::string_view op, const SourceLoc& loc) {
  if (!x.defined()) throw Error::make(loc, op, "got an undefined tensor");
  if (x.dim() < minRank)
    throw ShapeError::make(loc, op, "expects a tensor with at least ", minRank,
                           " dims (", minRank == 2 ? "[..., H, W]" : "[..., C, H, W]",
                           "), got shape ", x.sizes());
}

// `padding` zeros before and after `dim`.
Tensor padDim(const Tensor& x, int64_t dim, int64_t padding, const SourceLoc& loc) {
  Shape border = x.sizes();
  border[dim] = padding;
  Tensor zero = zeros(border, x.dtype(), loc);
  return cat({zero, x, zero}, dim, loc);
}

}  // namespace

// ---- ToFloat --------------------------------------------------------------------------

ToFloat::ToFloat(double divisor, const SourceLoc& loc) : divisor_(divisor), loc_(loc) {
  if (divisor == 0) throw Error::make(loc, "data::transforms::ToFloat", "divisor must not be 0");
}

Tensor ToFloat::operator()(const Tensor& x) const {
  if (!x.defined()) throw Error::make(loc_, "data::transforms::ToFloat", "got an undefined tensor");
  Tensor y = x.to(kFloat32, loc_);
  return divisor_ == 1 ? y : div(y, divisor_, loc_);
}

// ---- Normalize ------------------------------------------------------------------------

NormalizeChannels::NormalizeChannels(std::vector<double> mean, std::vector<double> std,
                                     const SourceLoc& loc)
    : mean_(std::move(mean)), std_(std::move(std)), loc_(loc) {
  constexpr std::string_view op = "data::transforms::Normalize";
  if (mean_.empty() || mean_.size() != std_.size())
    throw Error::make(loc, op, "needs one mean and one std per channel, got ", mean_.size(),
                      " means and ", std_.size(), " stds");
  for (size_t c = 0; c < std_.size(); ++c)
    if (std_[c] == 0) throw Error::make(loc, op, "std of channel ", c, " is 0");
}

Tensor NormalizeChannels::operator()(const Tensor& x) const {
  constexpr std::string_view op = "data::transforms::Normalize";
  checkImage(x, 3, op, loc_);
  if (!x.is_floating_point())
    throw TypeError::make(loc_, op, "expects a floating-point tensor, got ", x.dtype(),
                          " (convert with ToFloat first)");
  const int64_t channels = x.size(-3, loc_);
  if (mean_.size() != 1 && int64_t(mean_.size()) != channels)
    throw ShapeError::make(loc_, op, "has ", mean_.size(), " channels of mean and std but the ",
                           "tensor of shape ", x.sizes(), " has ", channels);
  const Shape perChannel = {int64_t(mean_.size()), 1, 1};
  Tensor mean = tensor(mean_, perChannel, loc_).to(x.dtype(), loc_);
  Tensor std = tensor(std_, perChannel, loc_).to(x.dtype(), loc_);
  return div(sub(x, mean, loc_), std, loc_);
}

// ---- Pad ------------------------------------------------------------------------------

Pad::Pad(int64_t padding, const SourceLoc& loc) : padding_(padding), loc_(loc) {
  if (padding < 0)
    throw Error::make(loc, "data::transforms::Pad", "padding must be >= 0, got ", padding);
}

Tensor Pad::operator()(const Tensor& x) const {
  checkImage(x, 2, "data::transforms::Pad", loc_);
  if (padding_ == 0) return x;
  const int64_t h = x.dim() - 2;
  return padDim(padDim(x, h, padding_, loc_), h + 1, padding_, loc_);
}

// ---- RandomCrop -----------------------------------------------------------------------

RandomCrop::RandomCrop(int64_t size, int64_t padding, uint64_t seed, const SourceLoc& loc)
    : size_(size),
      pad_(padding, loc),
      seed_(seed),
      calls_(std::make_shared<std::atomic<uint64_t>>(0)),
      loc_(loc) {
  if (size < 1) throw Error::make(loc, "data::transforms::RandomCrop", "size must be >= 1, got ", size);
}

Tensor RandomCrop::operator()(const Tensor& x, const SampleKey& key) const {
  checkImage(x, 2, "data::transforms::RandomCrop", loc_);
  Tensor padded = pad_(x);
  const int64_t h = padded.dim() - 2;
  const int64_t height = padded.size(h), width = padded.size(h + 1);
  if (height < size_ || width < size_)
    throw ShapeError::make(loc_, "data::transforms::RandomCrop", "cannot cut a ", size_, "x",
                           size_, " crop from a ", x.size(h), "x", x.size(h + 1), " image padded to ",
                           height, "x", width);
  const PhiloxCounter words = draw(seed_, key);
  const int64_t top = below(words[0], height - size_ + 1);
  const int64_t left = below(words[1], width - size_ + 1);
  return padded.narrow(h, top, size_, loc_).narrow(h + 1, left, size_, loc_).contiguous(loc_);
}

Tensor RandomCrop::operator()(const Tensor& x) const {
  return (*this)(x, SampleKey{0, calls_->fetch_add(1)});
}

// ---- RandomHorizontalFlip -------------------------------------------------------------

RandomHorizontalFlip::RandomHorizontalFlip(double p, uint64_t seed, const SourceLoc& loc)
    : p_(p), seed_(seed), calls_(std::make_shared<std::atomic<uint64_t>>(0)), loc_(loc) {
  if (!(p >= 0 && p <= 1))
    throw Error::make(loc, "data::transforms::RandomHorizontalFlip",
                      "p must be a probability in [0, 1], got ", p);
}

Tensor RandomHorizontalFlip::operator()(const Tensor& x, const SampleKey& key) const {
  checkImage(x, 2, "data::transforms::RandomHorizontalFlip", loc_);
  const float u = float(draw(seed_, key)[2] >> 8) * 0x1p-24f;
  if (!(u < p_)) return x;
  const int64_t w = x.dim() - 1;
  return index_select(x, w, arange(double(x.size(w) - 1), -1.0, -1.0, kInt64, loc_), loc_);
}

Tensor RandomHorizontalFlip::operator()(const Tensor& x) const {
  return (*this)(x, SampleKey{0, calls_->fetch_add(1)});
}

// ---- Compose --------------------------------------------------------------------------

Example<> Compose::operator()(Example<> example, const SampleKey& key) const {
  for (const Transform& step : steps_) example = step(std::move(example), key);
  return example;
}

Example<> Compose::operator()(Example<> example) const {
  for (const Transform& step : steps_) example = step(std::move(example));
  return example;
}

Tensor Compose::operator()(const Tensor& x, const SampleKey& key) const {
  return (*this)(Example<>{x, Tensor()}, key).data;
}

Tensor Compose::operator()(const Tensor& x) const { return (*this)(Example<>{x, Tensor()}).data; }

}  // namespace kiln::data::transforms

// Transforms of examples (torchvision's transforms, in C++): to float, Normalize, Pad,
// RandomCrop, RandomHorizontalFlip and Compose, plus the type-erased Transform the
// DataLoader applies to each example.
#pragma once

#include <atomic>
#include <concepts>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "kiln/core/Tensor.h"
#include "kiln/data/Dataset.h"

namespace kiln::data {

// Which draw a random transform makes: the DataLoader passes the epoch and the example's
// dataset index, so an example gets the same crop and flip whichever worker thread,
// batch size or order produces it, and a different one each epoch. Random transforms turn
// it into one Philox4x32-10 block: key (lo32(seed), hi32(seed)) of the transform's own
// seed, counter (lo32(index), hi32(index), lo32(epoch), hi32(epoch)).
struct SampleKey {
  uint64_t epoch = 0;
  uint64_t index = 0;
};

namespace transforms {

// Images are tensors whose last two dims are height and width ([C, H, W] examples or
// [N, C, H, W] batches). Every transform is a callable on a Tensor, with or without a
// SampleKey; calls without one are for use outside a DataLoader (random transforms then
// number their calls 0, 1, 2, ... as the index of epoch 0, so a sequence of calls is
// reproducible too). Errors point at the line that made the transform, which is what a
// DataLoader running it on a worker thread can name.

// float32(x) / divisor: ToFloat(255) maps 0-255 pixel values to [0, 1] as torchvision's
// ToTensor does (the built-in readers already return [0, 1] floats).
class ToFloat {
 public:
  explicit ToFloat(double divisor = 1.0, const SourceLoc& loc = SourceLoc::current());
  Tensor operator()(const Tensor& x) const;

 private:
  double divisor_;
  SourceLoc loc_;
};

// (x[c] - mean[c]) / std[c] per channel (dim -3), computed in x's floating dtype as
// torchvision's Normalize. One value applies to every channel. Normalize<> is its name.
class NormalizeChannels {
 public:
  NormalizeChannels(std::vector<double> mean, std::vector<double> std,
                    const SourceLoc& loc = SourceLoc::current());
  Tensor operator()(const Tensor& x) const;

 private:
  std::vector<double> mean_;
  std::vector<double> std_;
  SourceLoc loc_;
};

// Normalize({0.5, 0.5, 0.5}, {0.2, 0.2, 0.2}), or LibTorch's Normalize<>(0.1307, 0.3081).
// Target is LibTorch's parameter (the example's target type, passed through unchanged).
template <class Target = Tensor>
class Normalize : public NormalizeChannels {
 public:
  Normalize(std::vector<double> mean, std::vector<double> std,
            const SourceLoc& loc = SourceLoc::current())
      : NormalizeChannels(std::move(mean), std::move(std), loc) {}
  Normalize(double mean, double std, const SourceLoc& loc = SourceLoc::current())
      : NormalizeChannels({mean}, {std}, loc) {}
};

// Zero padding of `padding` elements on each side of the last two dims.
class Pad {
 public:
  explicit Pad(int64_t padding, const SourceLoc& loc = SourceLoc::current());
  Tensor operator()(const Tensor& x) const;

 private:
  int64_t padding_;
  SourceLoc loc_;
};

// Zero-pads by `padding`, then cuts a size x size window at a random position: top and
// left are uniform over the valid positions, from words 0 and 1 of the key's Philox block.
class RandomCrop {
 public:
  RandomCrop(int64_t size, int64_t padding = 0, uint64_t seed = 0,
             const SourceLoc& loc = SourceLoc::current());
  Tensor operator()(const Tensor& x, const SampleKey& key) const;
  Tensor operator()(const Tensor& x) const;  // the next key of this transform's own count

 private:
  int64_t size_;
  Pad pad_;
  uint64_t seed_;
  std::shared_ptr<std::atomic<uint64_t>> calls_;  // shared by copies, as a generator is
  SourceLoc loc_;
};

// Mirrors the last dim with probability p: when the float32 uniform of word 2 of the key's
// Philox block ((word >> 8) * 2^-24, kiln::rand's mapping) is below p. Word 2, not 0, so
// a flip and a crop with the same seed still draw independently.
class RandomHorizontalFlip {
 public:
  explicit RandomHorizontalFlip(double p = 0.5, uint64_t seed = 0,
                                const SourceLoc& loc = SourceLoc::current());
  Tensor operator()(const Tensor& x, const SampleKey& key) const;
  Tensor operator()(const Tensor& x) const;

 private:
  double p_;
  uint64_t seed_;
  std::shared_ptr<std::atomic<uint64_t>> calls_;
  SourceLoc loc_;
};

// Any transform, type-erased: a callable on a Tensor (applied to an example's data) or on
// an Example, each with or without a SampleKey. Default-constructed, it is the identity.
class Transform {
 public:
  Transform() = default;

  template <class F>
    requires(!std::same_as<std::remove_cvref_t<F>, Transform>)
  Transform(F f) : fn_(adapt(std::move(f))) {}  // NOLINT: implicit, so lists of steps read well

  Example<> operator()(Example<> example, const SampleKey& key) const { return apply(std::move(example), &key); }
  Example<> operator()(Example<> example) const { return apply(std::move(example), nullptr); }
  Tensor operator()(const Tensor& x, const SampleKey& key) const { return apply({x, Tensor()}, &key).data; }
  Tensor operator()(const Tensor& x) const { return apply({x, Tensor()}, nullptr).data; }

  explicit operator bool() const { return bool(fn_); }

 private:
  // `key` null: a call without a key (see above).
  using Fn = std::function<Example<>(Example<>, const SampleKey*)>;

  Example<> apply(Example<> example, const SampleKey* key) const {
    return fn_ ? fn_(std::move(example), key) : example;
  }

  template <class F, class Arg>
  static auto call(const F& f, Arg&& arg, const SampleKey* key) {
    constexpr bool keyed = std::invocable<const F&, Arg, const SampleKey&>;
    constexpr bool unkeyed = std::invocable<const F&, Arg>;
    if constexpr (keyed && unkeyed) return key ? f(std::forward<Arg>(arg), *key) : f(std::forward<Arg>(arg));
    else if constexpr (keyed) return f(std::forward<Arg>(arg), key ? *key : SampleKey{});
    else return f(std::forward<Arg>(arg));
  }

  template <class F>
  static Fn adapt(F f) {
    constexpr bool onExample =
        std::invocable<const F&, Example<>> || std::invocable<const F&, Example<>, const SampleKey&>;
    constexpr bool onTensor = std::invocable<const F&, const Tensor&> ||
                              std::invocable<const F&, const Tensor&, const SampleKey&>;
    static_assert(onExample || onTensor,
                  "a transform is callable on a Tensor or an Example, optionally with a SampleKey");
    if constexpr (onExample) {
      return [f = std::move(f)](Example<> e, const SampleKey* key) -> Example<> {
        return call(f, std::move(e), key);
      };
    } else {
      return [f = std::move(f)](Example<> e, const SampleKey* key) -> Example<> {
        e.data = call(f, std::as_const(e.data), key);
        return e;
      };
    }
  }

  Fn fn_;
};

// Applies its steps in order (torchvision's Compose); itself a transform.
class Compose {
 public:
  Compose(std::initializer_list<Transform> steps) : steps_(steps) {}
  explicit Compose(std::vector<Transform> steps) : steps_(std::move(steps)) {}

  Example<> operator()(Example<> example, const SampleKey& key) const;
  Example<> operator()(Example<> example) const;
  Tensor operator()(const Tensor& x, const SampleKey& key) const;
  Tensor operator()(const Tensor& x) const;

 private:
  std::vector<Transform> steps_;
};

}  // namespace transforms
}  // namespace kiln::data

#include "kiln/data/Transforms.h"

#include <gtest/gtest.h>

#include <set>

#include "DataTestSupport.h"
#include "kiln/core/Ops.h"
#include "kiln/core/Random.h"

namespace kiln::data::transforms {
namespace {

using testing::at;

std::vector<float> values(const Tensor& x) {
  Tensor c = x.contiguous();
  const float* p = c.data_ptr<float>();
  return std::vector<float>(p, p + c.numel());
}

// 0, 1, 2, ... as float32 of `shape`.
Tensor iota(Shape shape) { return arange(0.0, double(numel(shape)), 1.0, kFloat32).reshape(shape); }

// The Philox block a random transform with `seed` draws for `key` (SampleKey's contract).
PhiloxCounter block(uint64_t seed, SampleKey key) {
  return philox4x32_10({uint32_t(key.index), uint32_t(key.index >> 32), uint32_t(key.epoch),
                        uint32_t(key.epoch >> 32)},
                       {uint32_t(seed), uint32_t(seed >> 32)});
}

int64_t below(uint32_t word, int64_t count) { return int64_t((uint64_t(word) * count) >> 32); }

// ---- ToFloat --------------------------------------------------------------------------

TEST(TransformsTest, ToFloatConvertsAndDivides) {
  Tensor pixels = tensor(std::vector<int32_t>{0, 51, 255, 7});
  Tensor scaled = ToFloat(255)(pixels);
  EXPECT_EQ(scaled.dtype(), kFloat32);
  EXPECT_EQ(values(scaled), (std::vector<float>{0.0f, 51.0f / 255.0f, 1.0f, 7.0f / 255.0f}));
  Tensor converted = ToFloat()(tensor(std::vector<double>{0.1, -2.5}));
  EXPECT_EQ(values(converted), (std::vector<float>{0.1f, -2.5f}));
  EXPECT_KILN_ERROR(ToFloat(0), Error,
                    "kiln::data::transforms::ToFloat: divisor must not be 0" + at());
}

// ---- Normalize ------------------------------------------------------------------------

TEST(TransformsTest, NormalizePerChannel) {
  Tensor x = tensor(std::vector<float>{0.5f, 1.0f, 0.0f, 0.25f}, Shape{2, 1, 2});
  Normalize normalize({0.5, 0.25}, {0.5, 0.25});
  EXPECT_EQ(values(normalize(x)), (std::vector<float>{0.0f, 1.0f, -1.0f, 0.0f}));
  // A batch [N, C, H, W] normalizes each example alike.
  Tensor batch = stack({x, x});
  EXPECT_EQ(values(normalize(batch)), (std::vector<float>{0, 1, -1, 0, 0, 1, -1, 0}));
  // Computed in the input's dtype as torchvision's sub_(mean).div_(std).
  Tensor odd = tensor(std::vector<float>{0.3f}, Shape{1, 1, 1});
  EXPECT_EQ(values(Normalize({0.1307}, {0.3081})(odd))[0], (0.3f - 0.1307f) / 0.3081f);
  // One mean and std for every channel.
  EXPECT_EQ(values(Normalize({1}, {2})(x)), (std::vector<float>{-0.25f, 0.0f, -0.5f, -0.375f}));
}

TEST(TransformsTest, NormalizeErrors) {
  Tensor x = zeros({2, 1, 2});
  EXPECT_KILN_ERROR(Normalize({0.5}, {0.5, 0.5}), Error,
                    "kiln::data::transforms::Normalize: needs one mean and one std per "
                    "channel, got 1 means and 2 stds" + at());
  EXPECT_KILN_ERROR(Normalize({0, 0}, {1, 0}), Error,
                    "kiln::data::transforms::Normalize: std of channel 1 is 0" + at());
  // Errors of a call point at the line that made the transform.
  const SourceLoc made = SourceLoc::current();
  Normalize three({0, 0, 0}, {1, 1, 1}, made);
  const std::string line = at(made);
  EXPECT_KILN_ERROR(three(x), ShapeError,
                    "kiln::data::transforms::Normalize: has 3 channels of mean and std but "
                    "the tensor of shape [2, 1, 2] has 2" + line);
  EXPECT_KILN_ERROR(three(zeros({3, 4})), ShapeError,
                    "kiln::data::transforms::Normalize: expects a tensor with at least 3 dims "
                    "([..., C, H, W]), got shape [3, 4]" + line);
  EXPECT_KILN_ERROR(three(zeros({3, 1, 1}, kInt64)), TypeError,
                    "kiln::data::transforms::Normalize: expects a floating-point tensor, got "
                    "int64 (convert with ToFloat first)" + line);
}

// ---- Pad ------------------------------------------------------------------------------

TEST(TransformsTest, PadSurroundsWithZeros) {
  Tensor padded = Pad(1)(tensor(std::vector<float>{1, 2, 3, 4}, Shape{1, 2, 2}));
  EXPECT_EQ(padded.sizes(), (Shape{1, 4, 4}));
  EXPECT_EQ(values(padded), (std::vector<float>{0, 0, 0, 0,  //
                                                0, 1, 2, 0,  //
                                                0, 3, 4, 0,  //
                                                0, 0, 0, 0}));
  Tensor ints = Pad(2)(tensor(std::vector<int64_t>{5}, Shape{1, 1}));
  EXPECT_EQ(ints.dtype(), kInt64);
  EXPECT_EQ(ints.sizes(), (Shape{5, 5}));
  EXPECT_EQ(sum(ints).item<int64_t>(), 5);
  EXPECT_EQ(ints.data_ptr<int64_t>()[12], 5);
  EXPECT_EQ(Pad(0)(ints).sizes(), (Shape{5, 5}));
  EXPECT_EQ(Pad(1)(zeros({2, 3, 4, 5})).sizes(), (Shape{2, 3, 6, 7}));
}

TEST(TransformsTest, PadErrors) {
  EXPECT_KILN_ERROR(Pad(-1), Error, "kiln::data::transforms::Pad: padding must be >= 0, got -1" + at());
  const SourceLoc made = SourceLoc::current();
  Pad pad(1, made);
  const std::string line = at(made);
  EXPECT_KILN_ERROR(pad(zeros({3})), ShapeError,
                    "kiln::data::transforms::Pad: expects a tensor with at least 2 dims ([..., "
                    "H, W]), got shape [3]" + line);
}

// ---- RandomCrop -----------------------------------------------------------------------

TEST(TransformsTest, RandomCropCutsWhereTheKeysBlockSays) {
  const Tensor image = iota({1, 3, 3});
  const Tensor padded = Pad(1)(image);
  RandomCrop crop(2, /*padding=*/1, /*seed=*/7);
  std::set<std::pair<int64_t, int64_t>> corners;
  for (uint64_t epoch : {0, 1, 5})
    for (uint64_t index = 0; index < 40; ++index) {
      const SampleKey key{epoch, index};
      const PhiloxCounter words = block(7, key);
      const int64_t top = below(words[0], 4), left = below(words[1], 4);
      corners.insert({top, left});
      Tensor expected = padded.narrow(1, top, 2).narrow(2, left, 2);
      Tensor cropped = crop(image, key);
      ASSERT_EQ(cropped.sizes(), (Shape{1, 2, 2}));
      EXPECT_EQ(values(cropped), values(expected)) << epoch << " " << index;
      EXPECT_EQ(values(crop(image, key)), values(cropped)) << "same key, same crop";
    }
  EXPECT_EQ(corners.size(), 16u) << "every corner of the 4x4 padded image is reachable";
}

TEST(TransformsTest, RandomCropExactValues) {
  // Seed 0, key (0, 0): words 0 and 1 are 0x6627e8d5 and 0xe169c58d, so top = 1, left = 3.
  ASSERT_EQ(block(0, {0, 0})[0], 0x6627e8d5u);
  ASSERT_EQ(block(0, {0, 0})[1], 0xe169c58du);
  Tensor cropped = RandomCrop(2, 1)(iota({1, 3, 3}), SampleKey{0, 0});
  EXPECT_EQ(values(cropped), (std::vector<float>{2, 0, 5, 0}));
}

TEST(TransformsTest, RandomCropWithoutKeysCountsItsCalls) {
  const Tensor image = iota({1, 4, 4});
  RandomCrop crop(2, 0, 3);
  RandomCrop copy = crop;  // shares the count, as copies of a generator would share it
  for (uint64_t call = 0; call < 6; ++call) {
    const RandomCrop& which = call % 2 ? copy : crop;
    EXPECT_EQ(values(which(image)), values(crop(image, SampleKey{0, call}))) << call;
  }
  EXPECT_EQ(values(RandomCrop(2, 0, 3)(image)), values(crop(image, SampleKey{0, 0})))
      << "a new transform starts its count at 0";
}

TEST(TransformsTest, RandomCropErrors) {
  EXPECT_KILN_ERROR(RandomCrop(0), Error,
                    "kiln::data::transforms::RandomCrop: size must be >= 1, got 0" + at());
  EXPECT_KILN_ERROR(RandomCrop(2, -1), Error,
                    "kiln::data::transforms::Pad: padding must be >= 0, got -1" + at());
  const SourceLoc made = SourceLoc::current();
  RandomCrop crop(5, 1, 0, made);
  const std::string line = at(made);
  EXPECT_KILN_ERROR(crop(zeros({1, 2, 3})), ShapeError,
                    "kiln::data::transforms::RandomCrop: cannot cut a 5x5 crop from a 2x3 image "
                    "padded to 4x5" + line);
}

// ---- RandomHorizontalFlip -------------------------------------------------------------

TEST(TransformsTest, HorizontalFlipMirrorsTheLastDim) {
  Tensor x = tensor(std::vector<float>{1, 2, 3, 4, 5, 6}, Shape{1, 2, 3});
  EXPECT_EQ(values(RandomHorizontalFlip(1.0)(x)), (std::vector<float>{3, 2, 1, 6, 5, 4}));
  EXPECT_EQ(values(RandomHorizontalFlip(0.0)(x)), values(x));
}

TEST(TransformsTest, HorizontalFlipDecidesByWordTwoOfTheKeysBlock) {
  const Tensor x = iota({2, 1, 4});
  const std::vector<float> mirrored = {3, 2, 1, 0, 7, 6, 5, 4};
  RandomHorizontalFlip flip(0.5, /*seed=*/11);
  int flips = 0;
  for (uint64_t index = 0; index < 200; ++index) {
    const SampleKey key{2, index};
    const bool expectFlip = float(block(11, key)[2] >> 8) * 0x1p-24f < 0.5f;
    flips += expectFlip;
    EXPECT_EQ(values(flip(x, key)), expectFlip ? mirrored : values(x)) << index;
  }
  EXPECT_GT(flips, 70);
  EXPECT_LT(flips, 130);
  EXPECT_KILN_ERROR(RandomHorizontalFlip(1.5), Error,
                    "kiln::data::transforms::RandomHorizontalFlip: p must be a probability in "
                    "[0, 1], got 1.5" + at());
}

// ---- Compose and Transform ------------------------------------------------------------

TEST(TransformsTest, ComposeAppliesStepsInOrder) {
  const Tensor ones3 = ones({1, 2, 2});
  Compose padThenNormalize{Pad(1), Normalize({1}, {2})};
  std::vector<float> out = values(padThenNormalize(ones3));
  EXPECT_EQ(out.size(), 16u);
  EXPECT_EQ(out[0], -0.5f);  // the border: (0 - 1) / 2
  EXPECT_EQ(out[5], 0.0f);   // the image: (1 - 1) / 2
  Compose normalizeThenPad{Normalize({1}, {2}), Pad(1)};
  out = values(normalizeThenPad(ones3));
  EXPECT_EQ(out[0], 0.0f);
  EXPECT_EQ(out[5], 0.0f);
}

TEST(TransformsTest, ComposeMixesTensorAndExampleSteps) {
  Compose pipeline{
      ToFloat(255),
      [](Example<> e) {
        e.target = e.target + int64_t(1);
        return e;
      },
      [](const Tensor& x, const SampleKey& key) { return x + double(key.index); },
  };
  Example<> out = pipeline(Example<>{tensor(std::vector<int32_t>{0, 255}), tensor(std::vector<int64_t>{4})},
                         SampleKey{0, 3});
  EXPECT_EQ(values(out.data), (std::vector<float>{3.0f, 4.0f}));
  EXPECT_EQ(out.target.data_ptr<int64_t>()[0], 5);
  // Applied to a tensor, example steps see an undefined target.
  Compose dataOnly{ToFloat(), [](Example<> e) {
                     EXPECT_FALSE(e.target.defined());
                     return e;
                   }};
  EXPECT_EQ(values(dataOnly(tensor(std::vector<int32_t>{2}))), (std::vector<float>{2.0f}));
}

TEST(TransformsTest, ComposePassesKeysToRandomSteps) {
  const Tensor image = iota({1, 4, 4});
  Compose pipeline{RandomCrop(3, 0, 5), RandomHorizontalFlip(0.5, 5)};
  for (uint64_t index = 0; index < 20; ++index) {
    const SampleKey key{1, index};
    Tensor expected = RandomHorizontalFlip(0.5, 5)(RandomCrop(3, 0, 5)(image, key), key);
    EXPECT_EQ(values(pipeline(image, key)), values(expected)) << index;
  }
}

TEST(TransformsTest, DefaultTransformIsTheIdentity) {
  Transform identity;
  EXPECT_FALSE(identity);
  Tensor x = ones({2});
  EXPECT_TRUE(identity(x).is_same(x));
  Transform normalize = Normalize({0}, {1});
  EXPECT_TRUE(normalize);
}

}  // namespace
}  // namespace kiln::data::transforms

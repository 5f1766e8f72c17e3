#include "kiln/data/MNIST.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <optional>
#include <vector>

#include "DataTestSupport.h"

namespace kiln::data {
namespace {

using testing::at;
using testing::Bytes;
using testing::freshDir;
using testing::gzip;
using testing::idxFile;
using testing::pixelBytes;
using testing::writeFile;

// Three 2x3 images and their labels, as an idx3 and an idx1 file.
const Bytes kPixels = pixelBytes(3 * 2 * 3, 5);
const Bytes kLabels = {7, 0, 9};
const Bytes kImagesFile = idxFile({3, 2, 3}, kPixels);
const Bytes kLabelsFile = idxFile({3}, kLabels);

void expectImages(const Tensor& images) {
  ASSERT_EQ(images.sizes(), (Shape{3, 1, 2, 3}));
  ASSERT_EQ(images.dtype(), kFloat32);
  const float* values = images.data_ptr<float>();
  for (size_t k = 0; k < kPixels.size(); ++k)
    EXPECT_EQ(values[k], float(kPixels[k]) / 255.0f) << "pixel " << k;
}

void expectLabels(const Tensor& labels) {
  ASSERT_EQ(labels.sizes(), (Shape{3}));
  ASSERT_EQ(labels.dtype(), kInt64);
  for (size_t i = 0; i < kLabels.size(); ++i) EXPECT_EQ(labels.data_ptr<int64_t>()[i], kLabels[i]);
}

TEST(MNISTTest, ReadsPlainAndGzippedIdxFiles) {
  const std::string dir = freshDir();
  writeFile(dir + "/images", kImagesFile);
  writeFile(dir + "/images.gz", gzip(kImagesFile));
  writeFile(dir + "/labels", kLabelsFile);
  writeFile(dir + "/labels.gz", gzip(kLabelsFile));
  expectImages(read_idx_images(dir + "/images"));
  expectImages(read_idx_images(dir + "/images.gz"));
  expectLabels(read_idx_labels(dir + "/labels"));
  expectLabels(read_idx_labels(dir + "/labels.gz"));
}

TEST(MNISTTest, RecognizesGzipByMagicBytesNotByName) {
  const std::string dir = freshDir();
  writeFile(dir + "/gzipped-without-suffix", gzip(kImagesFile));
  writeFile(dir + "/plain-with-suffix.gz", kImagesFile);
  expectImages(read_idx_images(dir + "/gzipped-without-suffix"));
  expectImages(read_idx_images(dir + "/plain-with-suffix.gz"));
}

TEST(MNISTTest, PixelBytesMapOntoZeroToOne) {
  const std::string dir = freshDir();
  writeFile(dir + "/images", idxFile({1, 1, 3}, {0, 128, 255}));
  Tensor images = read_idx_images(dir + "/images");
  EXPECT_EQ(images.data_ptr<float>()[0], 0.0f);
  EXPECT_EQ(images.data_ptr<float>()[1], 128.0f / 255.0f);
  EXPECT_EQ(images.data_ptr<float>()[2], 1.0f);
}

TEST(MNISTTest, DatasetFindsTrainAndTestFilesPlainOrGzipped) {
  const std::string dir = freshDir();
  writeFile(dir + "/train-images-idx3-ubyte.gz", gzip(kImagesFile));
  writeFile(dir + "/train-labels-idx1-ubyte", kLabelsFile);
  writeFile(dir + "/t10k-images-idx3-ubyte", idxFile({1, 2, 3}, pixelBytes(6, 1)));
  writeFile(dir + "/t10k-labels-idx1-ubyte.gz", gzip(idxFile({1}, {4})));

  MNIST train(dir);
  ASSERT_EQ(train.size(), 3u);
  expectImages(train.images());
  expectLabels(train.targets());
  Example<> second = train.get(1);
  EXPECT_EQ(second.data.sizes(), (Shape{1, 2, 3}));
  EXPECT_EQ(second.data.data_ptr<float>()[0], float(kPixels[6]) / 255.0f);
  EXPECT_EQ(second.target.dim(), 0);
  EXPECT_EQ(second.target.item<int64_t>(), 0);

  MNIST test(dir, /*train=*/false);
  ASSERT_EQ(test.size(), 1u);
  EXPECT_EQ(test.get(0).target.item<int64_t>(), 4);
}

// LibTorch's spelling, through the dataset pipeline: MNIST(root, Mode::kTest).map(...).
TEST(MNISTTest, LibTorchsDatasetFeedsThePipeline) {
  const std::string dir = freshDir();
  writeFile(dir + "/train-images-idx3-ubyte", kImagesFile);
  writeFile(dir + "/train-labels-idx1-ubyte", kLabelsFile);
  writeFile(dir + "/t10k-images-idx3-ubyte", idxFile({1, 2, 3}, pixelBytes(6, 1)));
  writeFile(dir + "/t10k-labels-idx1-ubyte", idxFile({1}, {4}));

  datasets::MNIST train(dir);
  EXPECT_TRUE(train.is_train());
  EXPECT_EQ(train.size(), std::optional<size_t>(3));
  expectImages(train.images());
  expectLabels(train.targets());
  datasets::MNIST test(dir, datasets::MNIST::Mode::kTest);
  EXPECT_FALSE(test.is_train());
  EXPECT_EQ(test.get(0).target.item<int64_t>(), 4);

  auto loader = make_data_loader<samplers::SequentialSampler>(
      train.map(transforms::Normalize<>(0.5, 0.5)).map(transforms::Stack<>()), 2);
  std::vector<Shape> shapes;
  for (auto& batch : *loader) shapes.push_back(batch.data.sizes());
  EXPECT_THAT(shapes, ::testing::ElementsAre(Shape{2, 1, 2, 3}, Shape{1, 1, 2, 3}));
  EXPECT_KILN_ERROR(datasets::MNIST(dir + "/absent"), IOError,
                    "kiln::data::MNIST: no train-images-idx3-ubyte or "
                    "train-images-idx3-ubyte.gz in " + dir + "/absent (" + dir +
                        "/absent is not a directory)" + at());
}

TEST(MNISTTest, PrefersThePlainFileWhenBothExist) {
  const std::string dir = freshDir();
  writeFile(dir + "/train-images-idx3-ubyte", kImagesFile);
  writeFile(dir + "/train-images-idx3-ubyte.gz", Bytes{1, 2, 3});  // never read
  writeFile(dir + "/train-labels-idx1-ubyte", kLabelsFile);
  EXPECT_EQ(MNIST(dir).size(), 3u);
}

// ---- bad files ------------------------------------------------------------------------

TEST(MNISTTest, MissingFileNamesTheDirectoryTried) {
  const std::string dir = freshDir();
  writeFile(dir + "/train-images-idx3-ubyte", kImagesFile);
  EXPECT_KILN_ERROR(MNIST{dir}, IOError,
                    "kiln::data::MNIST: no train-labels-idx1-ubyte or "
                    "train-labels-idx1-ubyte.gz in " + dir + at());
  EXPECT_KILN_ERROR(MNIST(dir, false), IOError,
                    "kiln::data::MNIST: no t10k-images-idx3-ubyte or "
                    "t10k-images-idx3-ubyte.gz in " + dir + at());
  EXPECT_KILN_ERROR(MNIST(dir + "/absent"), IOError,
                    "kiln::data::MNIST: no train-images-idx3-ubyte or "
                    "train-images-idx3-ubyte.gz in " + dir + "/absent (" + dir +
                        "/absent is not a directory)" + at());
}

TEST(MNISTTest, UnreadablePaths) {
  const std::string dir = freshDir();
  EXPECT_KILN_ERROR(read_idx_images(dir + "/absent"), IOError,
                    "kiln::data::read_idx_images: cannot open " + dir +
                        "/absent: No such file or directory" + at());
  EXPECT_KILN_ERROR(read_idx_labels(dir), IOError,
                    "kiln::data::read_idx_labels: cannot read " + dir + ": Is a directory" + at());
}

TEST(MNISTTest, WrongMagicNumber) {
  const std::string dir = freshDir();
  writeFile(dir + "/labels", kLabelsFile);
  writeFile(dir + "/images", kImagesFile);
  Bytes floats = idxFile({3, 2, 3}, Bytes(18 * 4));
  floats[2] = 0x0D;  // idx element type float
  writeFile(dir + "/floats", floats);
  EXPECT_KILN_ERROR(read_idx_images(dir + "/labels"), IOError,
                    "kiln::data::read_idx_images: " + dir +
                        "/labels: wrong magic number 0x00000801 (expected 0x00000803, idx3 "
                        "unsigned-byte images)" + at());
  EXPECT_KILN_ERROR(read_idx_labels(dir + "/images"), IOError,
                    "kiln::data::read_idx_labels: " + dir +
                        "/images: wrong magic number 0x00000803 (expected 0x00000801, idx1 "
                        "unsigned-byte labels)" + at());
  EXPECT_KILN_ERROR(read_idx_images(dir + "/floats"), IOError,
                    "kiln::data::read_idx_images: " + dir +
                        "/floats: wrong magic number 0x00000D03 (expected 0x00000803, idx3 "
                        "unsigned-byte images)" + at());
}

TEST(MNISTTest, TruncatedHeader) {
  const std::string dir = freshDir();
  writeFile(dir + "/empty", {});
  writeFile(dir + "/short", Bytes(kImagesFile.begin(), kImagesFile.begin() + 10));
  EXPECT_KILN_ERROR(read_idx_labels(dir + "/empty"), IOError,
                    "kiln::data::read_idx_labels: " + dir +
                        "/empty: truncated header: 0 bytes, but an idx1 unsigned-byte labels "
                        "header has 8" + at());
  EXPECT_KILN_ERROR(read_idx_images(dir + "/short"), IOError,
                    "kiln::data::read_idx_images: " + dir +
                        "/short: truncated header: 10 bytes, but an idx3 unsigned-byte images "
                        "header has 16" + at());
}

TEST(MNISTTest, PayloadShorterOrLongerThanTheHeaderDeclares) {
  const std::string dir = freshDir();
  Bytes truncated(kImagesFile.begin(), kImagesFile.end() - 4);
  Bytes longer = kLabelsFile;
  longer.push_back(3);
  writeFile(dir + "/truncated.gz", gzip(truncated));
  writeFile(dir + "/longer", longer);
  writeFile(dir + "/huge", idxFile({0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF}, {1, 2}));
  EXPECT_KILN_ERROR(read_idx_images(dir + "/truncated.gz"), IOError,
                    "kiln::data::read_idx_images: " + dir +
                        "/truncated.gz: truncated: the header declares 3 images of 2x3 (18 "
                        "bytes) but only 14 bytes follow it" + at());
  EXPECT_KILN_ERROR(read_idx_labels(dir + "/longer"), IOError,
                    "kiln::data::read_idx_labels: " + dir +
                        "/longer: size mismatch: the header declares 3 labels (3 bytes) but 4 "
                        "bytes follow it" + at());
  EXPECT_KILN_ERROR(read_idx_images(dir + "/huge"), IOError,
                    "kiln::data::read_idx_images: " + dir +
                        "/huge: truncated: the header declares 4294967295 images of "
                        "4294967295x4294967295 (18446744073709551615 bytes) but only 2 bytes "
                        "follow it" + at());
}

TEST(MNISTTest, BrokenGzipStreams) {
  const std::string dir = freshDir();
  Bytes gz = gzip(kImagesFile);
  writeFile(dir + "/cut.gz", Bytes(gz.begin(), gz.begin() + gz.size() / 2));
  Bytes badCrc = gz;
  badCrc[badCrc.size() - 6] ^= 0xFF;  // the CRC-32 trailer
  writeFile(dir + "/crc.gz", badCrc);
  EXPECT_KILN_ERROR(read_idx_images(dir + "/cut.gz"), IOError,
                    "kiln::data::read_idx_images: " + dir +
                        "/cut.gz: truncated gzip data (the compressed stream ends early)" + at());
  EXPECT_KILN_ERROR(read_idx_images(dir + "/crc.gz"), IOError,
                    "kiln::data::read_idx_images: " + dir +
                        "/crc.gz: corrupt gzip data (incorrect data check)" + at());
}

TEST(MNISTTest, ImageAndLabelCountsMustAgree) {
  const std::string dir = freshDir();
  writeFile(dir + "/train-images-idx3-ubyte", kImagesFile);
  writeFile(dir + "/train-labels-idx1-ubyte.gz", gzip(idxFile({2}, {1, 2})));
  EXPECT_KILN_ERROR(MNIST{dir}, IOError,
                    "kiln::data::MNIST: " + dir + "/train-images-idx3-ubyte has 3 images but " +
                        dir + "/train-labels-idx1-ubyte.gz has 2 labels" + at());
}

TEST(MNISTTest, ErrorsInsideTheDatasetNameTheDataset) {
  const std::string dir = freshDir();
  writeFile(dir + "/train-images-idx3-ubyte", kLabelsFile);
  writeFile(dir + "/train-labels-idx1-ubyte", kLabelsFile);
  EXPECT_KILN_ERROR(MNIST{dir}, IOError,
                    "kiln::data::MNIST: " + dir +
                        "/train-images-idx3-ubyte: wrong magic number 0x00000801 (expected "
                        "0x00000803, idx3 unsigned-byte images)" + at());
}

// ---- Debian's dataset-fashion-mnist ----------------------------------------------------

constexpr const char* kFashionMNIST = "/usr/share/datasets/fashion-mnist";

// Values read with python3 + numpy from the gzipped files:
//   labels[:12], the per-class counts, image 0's row 14 columns 10-17, and the sum of every
//   pixel byte of the split.
struct Split {
  bool train;
  int64_t count;
  std::vector<int64_t> firstLabels;
  std::vector<int> row14;
  int64_t byteSum;
};

void expectSplit(const Split& split) {
  if (!std::filesystem::exists(std::string(kFashionMNIST) + "/t10k-labels-idx1-ubyte.gz"))
    GTEST_SKIP() << "Fashion-MNIST is not installed at " << kFashionMNIST
                 << " (Debian package dataset-fashion-mnist)";
  MNIST data(kFashionMNIST, split.train);
  ASSERT_EQ(data.size(), size_t(split.count));
  ASSERT_EQ(data.images().sizes(), (Shape{split.count, 1, 28, 28}));
  const int64_t* labels = data.targets().data_ptr<int64_t>();
  for (size_t i = 0; i < split.firstLabels.size(); ++i)
    EXPECT_EQ(labels[i], split.firstLabels[i]) << "label " << i;
  std::vector<int64_t> perClass(10);
  for (int64_t i = 0; i < split.count; ++i) perClass.at(labels[i])++;
  EXPECT_EQ(perClass, std::vector<int64_t>(10, split.count / 10));
  const float* pixels = data.images().data_ptr<float>();
  for (int c = 0; c < 8; ++c)
    EXPECT_EQ(pixels[14 * 28 + 10 + c], float(split.row14[c]) / 255.0f) << "column " << 10 + c;
  int64_t sum = 0;
  for (int64_t k = 0; k < data.images().numel(); ++k) sum += int64_t(pixels[k] * 255.0f + 0.5f);
  EXPECT_EQ(sum, split.byteSum);
}

TEST(MNISTTest, FashionMNISTTrainingSet) {
  expectSplit({true, 60000, {9, 0, 0, 3, 0, 2, 7, 2, 5, 5, 0, 9},
               {0, 0, 237, 226, 217, 223, 222, 219}, 3431114169});
}

TEST(MNISTTest, FashionMNISTTestSet) {
  expectSplit({false, 10000, {9, 2, 1, 1, 6, 1, 4, 6, 5, 7, 4, 5},
               {0, 0, 98, 136, 110, 109, 110, 162}, 573469082});
}

}  // namespace
}  // namespace kiln::data

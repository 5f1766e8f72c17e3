#include "kiln/data/CIFAR10.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "DataTestSupport.h"

namespace kiln::data {
namespace {

using testing::at;
using testing::Bytes;
using testing::freshDir;
using testing::gzip;
using testing::writeFile;

constexpr size_t kPixels = 3 * 32 * 32;

// Records labelled `labels`; pixel k of record r is (r + 3 k) % 256.
Bytes records(const Bytes& labels) {
  Bytes bytes;
  for (size_t r = 0; r < labels.size(); ++r) {
    bytes.push_back(labels[r]);
    for (size_t k = 0; k < kPixels; ++k) bytes.push_back(uint8_t(r + 3 * k));
  }
  return bytes;
}

float pixel(size_t record, size_t k) { return float(uint8_t(record + 3 * k)) / 255.0f; }

TEST(CIFAR10Test, ReadsABatchPlainAndGzipped) {
  const std::string dir = freshDir();
  const Bytes file = records({3, 9, 0});
  writeFile(dir + "/data_batch_1.bin", file);
  writeFile(dir + "/gzipped.bin", gzip(file));
  for (const std::string name : {"data_batch_1.bin", "gzipped.bin"}) {
    Example<> batch = read_cifar10_batch(dir + "/" + name);
    ASSERT_EQ(batch.data.sizes(), (Shape{3, 3, 32, 32}));
    ASSERT_EQ(batch.data.dtype(), kFloat32);
    ASSERT_EQ(batch.target.sizes(), (Shape{3}));
    ASSERT_EQ(batch.target.dtype(), kInt64);
    EXPECT_EQ(batch.target.data_ptr<int64_t>()[0], 3);
    EXPECT_EQ(batch.target.data_ptr<int64_t>()[1], 9);
    EXPECT_EQ(batch.target.data_ptr<int64_t>()[2], 0);
    // Channel planes follow each other in the record: red, green, blue, rows top down.
    const float* values = batch.data.data_ptr<float>();
    for (size_t r = 0; r < 3; ++r)
      for (size_t k = 0; k < kPixels; k += 97) EXPECT_EQ(values[r * kPixels + k], pixel(r, k));
    EXPECT_EQ(values[1 * kPixels + 2 * 1024 + 5 * 32 + 7], pixel(1, 2 * 1024 + 5 * 32 + 7));
  }
}

TEST(CIFAR10Test, TrainingSetConcatenatesTheFiveBatchesInOrder) {
  const std::string dir = freshDir();
  for (int i = 1; i <= 5; ++i) {
    const Bytes file = records({uint8_t(i), uint8_t(i + 1)});
    writeFile(dir + "/data_batch_" + std::to_string(i) + ".bin", i % 2 ? file : gzip(file));
  }
  writeFile(dir + "/test_batch.bin", records({8}));
  CIFAR10 train(dir);
  ASSERT_EQ(train.size(), 10u);
  EXPECT_EQ(train.images().sizes(), (Shape{10, 3, 32, 32}));
  for (int64_t i = 0; i < 10; ++i)
    EXPECT_EQ(train.targets().data_ptr<int64_t>()[i], i / 2 + 1 + i % 2) << i;
  Example<> third = train.get(3);  // record 1 of data_batch_2.bin
  EXPECT_EQ(third.data.sizes(), (Shape{3, 32, 32}));
  EXPECT_EQ(third.data.data_ptr<float>()[10], pixel(1, 10));
  EXPECT_EQ(third.target.item<int64_t>(), 3);

  CIFAR10 test(dir, /*train=*/false);
  ASSERT_EQ(test.size(), 1u);
  EXPECT_EQ(test.get(0).target.item<int64_t>(), 8);
}

TEST(CIFAR10Test, FindsTheOfficialArchiveDirectory) {
  const std::string root = freshDir();
  std::filesystem::create_directory(root + "/cifar-10-batches-bin");
  writeFile(root + "/cifar-10-batches-bin/test_batch.bin.gz", gzip(records({1, 2})));
  EXPECT_EQ(CIFAR10(root, false).size(), 2u);
}

// ---- bad files ------------------------------------------------------------------------

TEST(CIFAR10Test, MissingFileNamesTheDirectoriesTried) {
  const std::string dir = freshDir();
  for (int i = 1; i <= 3; ++i) writeFile(dir + "/data_batch_" + std::to_string(i) + ".bin", records({1}));
  EXPECT_KILN_ERROR(CIFAR10{dir}, IOError,
                    "kiln::data::CIFAR10: no data_batch_4.bin or data_batch_4.bin.gz in " + dir +
                        " or " + dir + "/cifar-10-batches-bin" + at());
}

TEST(CIFAR10Test, EmptyFile) {
  const std::string dir = freshDir();
  writeFile(dir + "/test_batch.bin", {});
  EXPECT_KILN_ERROR(CIFAR10(dir, false), IOError,
                    "kiln::data::CIFAR10: " + dir + "/test_batch.bin: empty file" + at());
}

TEST(CIFAR10Test, TruncatedRecord) {
  const std::string dir = freshDir();
  const Bytes file = records({1, 2, 3});
  writeFile(dir + "/batch.bin", Bytes(file.begin(), file.end() - 3072));
  EXPECT_KILN_ERROR(read_cifar10_batch(dir + "/batch.bin"), IOError,
                    "kiln::data::read_cifar10_batch: " + dir +
                        "/batch.bin: truncated record: 6147 bytes = 2 records of 3073 bytes (1 "
                        "label byte + 3072 pixel bytes) + 1 of the next record's 3073" + at());
}

TEST(CIFAR10Test, LabelOutOfRange) {
  const std::string dir = freshDir();
  writeFile(dir + "/batch.bin", records({1, 10}));
  EXPECT_KILN_ERROR(read_cifar10_batch(dir + "/batch.bin"), IOError,
                    "kiln::data::read_cifar10_batch: " + dir +
                        "/batch.bin: record 1 has label 10; CIFAR-10 labels are 0-9" + at());
}

TEST(CIFAR10Test, TruncatedGzip) {
  const std::string dir = freshDir();
  Bytes gz = gzip(records({1, 2}));
  writeFile(dir + "/batch.bin", Bytes(gz.begin(), gz.end() - 5));
  EXPECT_KILN_ERROR(read_cifar10_batch(dir + "/batch.bin"), IOError,
                    "kiln::data::read_cifar10_batch: " + dir +
                        "/batch.bin: truncated gzip data (the compressed stream ends early)" + at());
}

}  // namespace
}  // namespace kiln::data

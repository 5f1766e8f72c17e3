// CIFAR-10's binary batches and the CIFAR10 dataset.
#include "kiln/data/CIFAR10.h"

#include <filesystem>

#include "frontend/data/DataFiles.h"
#include "kiln/core/Ops.h"

namespace kiln::data {

namespace {

constexpr int64_t kPixels = 3 * 32 * 32;
constexpr int64_t kRecordBytes = 1 + kPixels;
constexpr int kClasses = 10;

Example<> readBatch(const std::string& path, std::string_view op, const SourceLoc& loc) {
  const std::vector<uint8_t> bytes = detail::readFileBytes(path, op, loc);
  const int64_t size = int64_t(bytes.size());
  if (size == 0) throw IOError::make(loc, op, path, ": empty file");
  if (size % kRecordBytes != 0)
    throw IOError::make(loc, op, path, ": truncated record: ", size, " bytes = ",
                        size / kRecordBytes, " records of ", kRecordBytes, " bytes (1 label byte + ",
                        kPixels, " pixel bytes) + ", size % kRecordBytes, " of the next record's ",
                        kRecordBytes);
  const int64_t count = size / kRecordBytes;
  Tensor images = empty({count, 3, 32, 32}, kFloat32, loc);
  Tensor labels = empty({count}, kInt64, loc);
  float* pixels = images.data_ptr<float>(loc);
  int64_t* targets = labels.data_ptr<int64_t>(loc);
  for (int64_t r = 0; r < count; ++r) {
    const uint8_t* record = bytes.data() + r * kRecordBytes;
    if (record[0] >= kClasses)
      throw IOError::make(loc, op, path, ": record ", r, " has label ", int(record[0]),
                          "; CIFAR-10 labels are 0-9");
    targets[r] = record[0];
    detail::bytesToUnitFloats(record + 1, kPixels, pixels + r * kPixels);
  }
  return {images, labels};
}

TensorDataset loadCIFAR10(const std::string& root, bool train, const SourceLoc& loc) {
  constexpr std::string_view op = "data::CIFAR10";
  const std::vector<std::string> dirs = {
      root, (std::filesystem::path(root) / "cifar-10-batches-bin").string()};
  std::vector<std::string> names;
  if (train)
    for (int i = 1; i <= 5; ++i) names.push_back("data_batch_" + std::to_string(i) + ".bin");
  else
    names.push_back("test_batch.bin");
  std::vector<Tensor> images, labels;
  for (const std::string& name : names) {
    Example<> batch = readBatch(detail::findFile(dirs, name, op, loc), op, loc);
    images.push_back(batch.data);
    labels.push_back(batch.target);
  }
  if (images.size() == 1) return TensorDataset(images[0], labels[0], loc);
  return TensorDataset(cat(images, 0, loc), cat(labels, 0, loc), loc);
}

}  // namespace

Example<> read_cifar10_batch(const std::string& path, const SourceLoc& loc) {
  return readBatch(path, "data::read_cifar10_batch", loc);
}

CIFAR10::CIFAR10(const std::string& root, bool train, const SourceLoc& loc)
    : TensorDataset(loadCIFAR10(root, train, loc)) {}

}  // namespace kiln::data

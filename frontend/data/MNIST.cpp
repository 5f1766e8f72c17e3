// The idx file format of MNIST and Fashion-MNIST, and the MNIST dataset.
#include "kiln/data/MNIST.h"

#include <cstdio>

#include "frontend/data/DataFiles.h"
#include "kiln/core/Ops.h"

namespace kiln::data {

namespace {

// idx magic numbers: two zero bytes, the element type (0x08: unsigned byte), the rank.
constexpr uint32_t kLabelsMagic = 0x00000801;
constexpr uint32_t kImagesMagic = 0x00000803;

uint32_t bigEndian32(const uint8_t* p) {
  return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | uint32_t(p[3]);
}

std::string hex32(uint32_t value) {
  char text[11];
  std::snprintf(text, sizeof text, "0x%08X", value);
  return text;
}

// An idx file's header (magic and dims) checked against what the payload holds.
struct IdxFile {
  std::vector<uint8_t> bytes;
  std::vector<uint32_t> dims;
  const uint8_t* payload() const { return bytes.data() + 4 * (dims.size() + 1); }
};

IdxFile readIdx(const std::string& path, uint32_t magic, std::string_view what,
                std::string_view op, const SourceLoc& loc) {
  IdxFile idx{detail::readFileBytes(path, op, loc), {}};
  const size_t rank = magic & 0xFF;
  const size_t headerBytes = 4 * (rank + 1);
  const std::string kind = "idx" + std::to_string(rank) + " unsigned-byte " + std::string(what);
  // The magic first: a file of another kind is named as such, however short.
  if (idx.bytes.size() >= 4)
    if (uint32_t found = bigEndian32(idx.bytes.data()); found != magic)
      throw IOError::make(loc, op, path, ": wrong magic number ", hex32(found), " (expected ",
                          hex32(magic), ", ", kind, ")");
  if (idx.bytes.size() < headerBytes)
    throw IOError::make(loc, op, path, ": truncated header: ", idx.bytes.size(),
                        " bytes, but an ", kind, " header has ", headerBytes);
  uint64_t expected = 1;
  bool overflow = false;
  std::string declared;
  for (size_t d = 0; d < rank; ++d) {
    idx.dims.push_back(bigEndian32(idx.bytes.data() + 4 * (d + 1)));
    overflow |= __builtin_mul_overflow(expected, uint64_t(idx.dims.back()), &expected);
    if (d > 0) declared += (d == 1 ? " of " : "x") + std::to_string(idx.dims.back());
  }
  if (overflow) expected = UINT64_MAX;  // more than any file holds: reported as truncated
  declared = std::to_string(idx.dims[0]) + " " + std::string(what) + declared;
  const uint64_t found = idx.bytes.size() - headerBytes;
  if (found < expected)
    throw IOError::make(loc, op, path, ": truncated: the header declares ", declared, " (",
                        expected, " bytes) but only ", found, " bytes follow it");
  if (found > expected)
    throw IOError::make(loc, op, path, ": size mismatch: the header declares ", declared,
                        " (", expected, " bytes) but ", found, " bytes follow it");
  return idx;
}

Tensor imagesFrom(const std::string& path, std::string_view op, const SourceLoc& loc) {
  IdxFile idx = readIdx(path, kImagesMagic, "images", op, loc);
  Tensor images = empty({int64_t(idx.dims[0]), 1, int64_t(idx.dims[1]), int64_t(idx.dims[2])},
                        kFloat32, loc);
  detail::bytesToUnitFloats(idx.payload(), size_t(images.numel()), images.data_ptr<float>(loc));
  return images;
}

Tensor labelsFrom(const std::string& path, std::string_view op, const SourceLoc& loc) {
  IdxFile idx = readIdx(path, kLabelsMagic, "labels", op, loc);
  Tensor labels = empty({int64_t(idx.dims[0])}, kInt64, loc);
  int64_t* out = labels.data_ptr<int64_t>(loc);
  for (uint32_t i = 0; i < idx.dims[0]; ++i) out[i] = idx.payload()[i];
  return labels;
}

TensorDataset loadMNIST(const std::string& root, bool train, const SourceLoc& loc) {
  constexpr std::string_view op = "data::MNIST";
  const std::string prefix = train ? "train" : "t10k";
  const std::string imagesPath = detail::findFile({root}, prefix + "-images-idx3-ubyte", op, loc);
  const std::string labelsPath = detail::findFile({root}, prefix + "-labels-idx1-ubyte", op, loc);
  Tensor images = imagesFrom(imagesPath, op, loc);
  Tensor labels = labelsFrom(labelsPath, op, loc);
  if (images.size(0) != labels.size(0))
    throw IOError::make(loc, op, imagesPath, " has ", images.size(0), " images but ",
                        labelsPath, " has ", labels.size(0), " labels");
  return TensorDataset(std::move(images), std::move(labels), loc);
}

}  // namespace

Tensor read_idx_images(const std::string& path, const SourceLoc& loc) {
  return imagesFrom(path, "data::read_idx_images", loc);
}

Tensor read_idx_labels(const std::string& path, const SourceLoc& loc) {
  return labelsFrom(path, "data::read_idx_labels", loc);
}

MNIST::MNIST(const std::string& root, bool train, const SourceLoc& loc)
    : TensorDataset(loadMNIST(root, train, loc)) {}

datasets::MNIST::MNIST(const std::string& root, Mode mode, const SourceLoc& loc)
    : examples_(root, mode == Mode::kTrain, loc), mode_(mode) {}

}  // namespace kiln::data

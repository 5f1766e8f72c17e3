// Writes a small fake Fashion-MNIST into a directory, in the idx layout of the real one,
// so the example's tests run without the real data:
//
//   make_fake_idx DIR TRAIN_COUNT TEST_COUNT
//
// Example i has label i % 10; its 28x28 image is dim noise with two bright rows whose
// position is the label, so a model can learn it in a few steps. The training images are
// written gzipped and the test images plain, as both forms occur in the wild.
#include <zlib.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

namespace {

constexpr uint32_t kRows = 28, kCols = 28;

using Bytes = std::vector<uint8_t>;

void appendBigEndian32(Bytes& bytes, uint32_t value) {
  for (int shift = 24; shift >= 0; shift -= 8) bytes.push_back(uint8_t(value >> shift));
}

// Magic 0x0000080<rank>, the dims, then the payload.
Bytes idx(const std::vector<uint32_t>& dims, const Bytes& payload) {
  Bytes bytes;
  appendBigEndian32(bytes, 0x800 + uint32_t(dims.size()));
  for (uint32_t d : dims) appendBigEndian32(bytes, d);
  bytes.insert(bytes.end(), payload.begin(), payload.end());
  return bytes;
}

bool writePlain(const std::string& path, const Bytes& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
  return out.good();
}

bool writeGzip(const std::string& path, const Bytes& bytes) {
  gzFile file = gzopen(path.c_str(), "wb");
  if (!file) return false;
  bool ok = gzwrite(file, bytes.data(), unsigned(bytes.size())) == int(bytes.size());
  return gzclose(file) == Z_OK && ok;
}

// Writes "<prefix>-images-idx3-ubyte" and "<prefix>-labels-idx1-ubyte" for `count`
// examples, numbering them from `first` so train and test images differ.
bool writeSet(const std::filesystem::path& dir, const std::string& prefix, uint32_t count,
              uint32_t first, bool gzip) {
  Bytes images, labels;
  uint32_t state = 12345 + first;
  for (uint32_t i = 0; i < count; ++i) {
    uint8_t label = uint8_t((first + i) % 10);
    labels.push_back(label);
    for (uint32_t r = 0; r < kRows; ++r) {
      for (uint32_t c = 0; c < kCols; ++c) {
        state = state * 1664525u + 1013904223u;  // a 32-bit LCG: noise in [0, 48)
        uint8_t noise = uint8_t((state >> 24) % 48);
        bool bright = r == 4 + 2u * label || r == 5 + 2u * label;
        images.push_back(bright ? uint8_t(200 + noise) : noise);
      }
    }
  }
  std::string suffix = gzip ? ".gz" : "";
  auto write = gzip ? writeGzip : writePlain;
  return write((dir / (prefix + "-images-idx3-ubyte" + suffix)).string(),
               idx({count, kRows, kCols}, images)) &&
         write((dir / (prefix + "-labels-idx1-ubyte" + suffix)).string(), idx({count}, labels));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::cerr << "usage: make_fake_idx DIR TRAIN_COUNT TEST_COUNT\n";
    return 2;
  }
  std::filesystem::path dir = argv[1];
  auto trainCount = uint32_t(std::strtoul(argv[2], nullptr, 10));
  auto testCount = uint32_t(std::strtoul(argv[3], nullptr, 10));
  std::filesystem::create_directories(dir);
  if (!writeSet(dir, "train", trainCount, 0, /*gzip=*/true) ||
      !writeSet(dir, "t10k", testCount, trainCount, /*gzip=*/false)) {
    std::cerr << "make_fake_idx: cannot write into " << dir << "\n";
    return 1;
  }
  return 0;
}

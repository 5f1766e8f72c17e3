// Shared by the data tests: files in each format written into TEST_TMPDIR, plain or
// gzipped; error assertions come from the core's ExpectError.h.
#pragma once

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "kiln/core/Error.h"
#include "test/unit/frontend/core/ExpectError.h"

namespace kiln::data::testing {

using Bytes = std::vector<uint8_t>;

// A fresh directory for the running test under TEST_TMPDIR.
inline std::string freshDir() {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const ::testing::TestInfo* test = ::testing::UnitTest::GetInstance()->current_test_info();
  std::filesystem::path dir = std::filesystem::path(tmp ? tmp : "/tmp") /
                              (std::string(test->test_suite_name()) + "." + test->name());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

inline void writeFile(const std::string& path, const Bytes& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
  ASSERT_TRUE(out.good()) << path;
}

inline Bytes gzip(const Bytes& bytes) {
  uLongf size = compressBound(uLong(bytes.size())) + 64;
  Bytes out(size);
  z_stream stream{};
  // windowBits 15 + 16: a gzip wrapper rather than zlib's.
  EXPECT_EQ(deflateInit2(&stream, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
  stream.next_in = const_cast<Bytes::value_type*>(bytes.data());
  stream.avail_in = uInt(bytes.size());
  stream.next_out = out.data();
  stream.avail_out = uInt(out.size());
  EXPECT_EQ(deflate(&stream, Z_FINISH), Z_STREAM_END);
  out.resize(stream.total_out);
  deflateEnd(&stream);
  return out;
}

inline void appendBigEndian32(Bytes& bytes, uint32_t value) {
  for (int shift = 24; shift >= 0; shift -= 8) bytes.push_back(uint8_t(value >> shift));
}

// An idx file: magic 0x0000080<rank>, the dims, then the payload.
inline Bytes idxFile(const std::vector<uint32_t>& dims, const Bytes& payload) {
  Bytes bytes;
  appendBigEndian32(bytes, 0x800 + uint32_t(dims.size()));
  for (uint32_t d : dims) appendBigEndian32(bytes, d);
  bytes.insert(bytes.end(), payload.begin(), payload.end());
  return bytes;
}

// n images of h x w whose pixel k (in file order) is (seed + 7 k) % 256.
inline Bytes pixelBytes(size_t count, uint8_t seed) {
  Bytes bytes(count);
  for (size_t k = 0; k < count; ++k) bytes[k] = uint8_t(seed + 7 * k);
  return bytes;
}

// " (at <file>:<line>)" for the caller's line, as kiln::Error::what() ends.
using kiln::testing::at;

}  // namespace kiln::data::testing

// Files for the io tests: fresh paths under $TEST_TMPDIR, raw bytes in and out, directory
// listings (to see leftover temporary files), and the checked-in fixtures.
#pragma once

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>

#include "kiln/core/Tensor.h"
#include "test/unit/frontend/Golden.h"

namespace kiln::io::testing {

// A new empty directory for the calling test, under $TEST_TMPDIR (or /tmp).
inline std::string freshDir() {
  const char* root = std::getenv("TEST_TMPDIR");
  const ::testing::TestInfo* test = ::testing::UnitTest::GetInstance()->current_test_info();
  std::filesystem::path dir = std::filesystem::path(root ? root : "/tmp") /
                              (std::string(test->test_suite_name()) + "." + test->name());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

inline void writeBytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), std::streamsize(bytes.size()));
  ASSERT_TRUE(out.good()) << path;
}

inline std::string readBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << path;
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline std::set<std::string> listDir(const std::string& dir) {
  std::set<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    names.insert(entry.path().filename().string());
  return names;
}

// The temporary name io writes before renaming: "<path>.tmp.<pid>.<tid>".
inline std::string tempPathOf(const std::string& path) {
  return path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(::gettid());
}

inline std::string fixture(const std::string& name) {
  return golden::runfilePath("test/unit/frontend/io/testdata/" + name);
}

// A tensor's values as doubles (exact for every dtype Kiln has).
inline std::vector<double> values(const Tensor& t) { return golden::valuesAsDouble(t); }

// A tensor's bytes in C order, to compare bit patterns (NaN payloads, -0.0) exactly.
inline std::string bytesOf(const Tensor& t) {
  Tensor c = t.contiguous();
  return std::string(static_cast<const char*>(c.rawData()), size_t(c.numel()) * c.element_size());
}

}  // namespace kiln::io::testing

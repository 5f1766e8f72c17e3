#include "kiln/core/Storage.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

#include "kiln/core/Error.h"

// Under AddressSanitizer a failed allocation would abort instead of returning null; the
// out-of-memory test needs the null.
#if defined(__SANITIZE_ADDRESS__)
extern "C" const char* __asan_default_options() { return "allocator_may_return_null=1"; }
#endif

namespace kiln {
namespace {

bool aligned(const void* p) { return reinterpret_cast<uintptr_t>(p) % Storage::kAlignment == 0; }

TEST(StorageTest, AllocationsAreAlignedAndWritable) {
  for (size_t n : {1u, 3u, 63u, 64u, 65u, 1000u, 1u << 20}) {
    auto s = Storage::allocate(n);
    ASSERT_NE(s->data(), nullptr);
    EXPECT_TRUE(aligned(s->data())) << n;
    EXPECT_EQ(s->nbytes(), n);
    EXPECT_EQ(s->device(), Device(kCPU));
    std::memset(s->data(), 0xab, n);
    EXPECT_EQ(static_cast<const unsigned char*>(s->data())[n - 1], 0xab);
  }
}

TEST(StorageTest, ZeroBytesGivesANonNullAlignedPointer) {
  auto a = Storage::allocate(0);
  auto b = Storage::allocate(0);
  EXPECT_EQ(a->nbytes(), 0u);
  ASSERT_NE(a->data(), nullptr);
  EXPECT_TRUE(aligned(a->data()));
  std::memcpy(a->data(), b->data(), 0);  // defined: both pointers are valid
}

TEST(StorageTest, SharedByReference) {
  auto s = Storage::allocate(16);
  std::shared_ptr<Storage> view = s;
  EXPECT_EQ(s.use_count(), 2);
  static_cast<char*>(view->data())[0] = 'k';
  EXPECT_EQ(static_cast<const char*>(s->data())[0], 'k');
}

TEST(StorageTest, FromBlobWrapsWithoutCopyingAndRunsTheDeleterOnce) {
  float values[4] = {1, 2, 3, 4};
  int deleted = 0;
  void* seen = nullptr;
  {
    auto s = Storage::fromBlob(values, sizeof values, [&](void* p) {
      ++deleted;
      seen = p;
    });
    EXPECT_EQ(s->data(), values);
    EXPECT_EQ(s->nbytes(), sizeof values);
    auto copy = s;
    s.reset();
    EXPECT_EQ(deleted, 0);
  }
  EXPECT_EQ(deleted, 1);
  EXPECT_EQ(seen, values);
}

TEST(StorageTest, FromBlobWithoutDeleterLeavesMemoryAlone) {
  int value = 7;
  { auto s = Storage::fromBlob(&value, sizeof value); }
  EXPECT_EQ(value, 7);
}

TEST(StorageTest, OutOfMemoryNamesTheByteCount) {
  size_t huge = size_t(1) << 60;
  int line = __LINE__ + 2;
  try {
    Storage::allocate(huge, kCPU, "zeros");
    FAIL() << "allocated 2^60 bytes";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "kiln::zeros: out of memory allocating 1152921504606846976 bytes (at "
              "test/unit/frontend/core/StorageTest.cpp:" + std::to_string(line) + ")");
  }
}

TEST(StorageTest, CudaAllocationIsNotSupportedYet) {
  try {
    Storage::allocate(8, Device(kCUDA, 1));
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.op(), "empty");
    EXPECT_EQ(e.message(),
              "cannot allocate 8 bytes on cuda:1: only CPU storage is supported so far");
  }
}

}  // namespace
}  // namespace kiln

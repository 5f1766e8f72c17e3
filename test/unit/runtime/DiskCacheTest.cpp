// DiskCache: entries round-trip, corrupt entries are detected, reported once and removed,
// and concurrent writers (threads and processes) never leave a torn entry.
#include "runtime/cache/DiskCache.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

namespace kiln::runtime {
namespace {

class DiskCacheTest : public ::testing::Test {
 protected:
  DiskCacheTest()
      : directory(std::string(::testing::TempDir()) + "/kiln-cache-" +
                  ::testing::UnitTest::GetInstance()->current_test_info()->name()),
        cache(directory) {
    std::filesystem::remove_all(directory);
  }

  std::string readFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }
  void writeFile(const std::string& path, const std::string& bytes) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  }

  std::string directory;
  DiskCache cache;
  const std::string key = DiskCache::keyOf({"module", "x86_64|znver3|+avx2", "v1"});
};

TEST_F(DiskCacheTest, KeysDependOnEveryPartAndItsBoundaries) {
  EXPECT_EQ(key.size(), 64u);
  EXPECT_EQ(key, DiskCache::keyOf({"module", "x86_64|znver3|+avx2", "v1"}));
  EXPECT_NE(key, DiskCache::keyOf({"module", "x86_64|znver3|+avx2", "v2"}));
  EXPECT_NE(DiskCache::keyOf({"ab", "c"}), DiskCache::keyOf({"a", "bc"}));
}

TEST_F(DiskCacheTest, AnEntryRoundTrips) {
  EXPECT_FALSE(cache.load(key));
  std::string binary("\0\1\2 object \xff", 12);
  cache.store(key, {"planned module", binary});
  std::optional<CacheEntry> entry = cache.load(key);
  ASSERT_TRUE(entry);
  EXPECT_EQ(entry->module, "planned module");
  EXPECT_EQ(entry->object, binary);
  // No temporary files are left behind.
  int files = 0;
  for (const auto& f : std::filesystem::directory_iterator(directory)) files += f.is_regular_file();
  EXPECT_EQ(files, 1);
}

TEST_F(DiskCacheTest, CorruptEntriesAreReportedOnceRemovedAndRebuilt) {
  const std::string path = cache.pathOf(key);
  cache.store(key, {"planned module", "object bytes"});
  const std::string good = readFile(path);
  struct Corruption {
    const char* name;
    std::string bytes;
  };
  std::string flipped = good;
  flipped[flipped.size() - 3] ^= 0x40;
  std::string badMagic = good;
  badMagic[0] = 'X';
  const std::string otherKey = DiskCache::keyOf({"another module"});
  std::string wrongKey = good;
  wrongKey.replace(12, 64, otherKey);
  for (const Corruption& c : {Corruption{"truncated", good.substr(0, good.size() - 5)},
                              Corruption{"flipped byte", flipped}, Corruption{"bad magic", badMagic},
                              Corruption{"wrong key", wrongKey}, Corruption{"empty", ""}}) {
    writeFile(path, c.bytes);
    ::testing::internal::CaptureStderr();
    EXPECT_FALSE(cache.load(key)) << c.name;
    EXPECT_FALSE(std::filesystem::exists(path)) << c.name << ": a corrupt entry is removed";
    std::string report = ::testing::internal::GetCapturedStderr();
    if (std::string(c.name) == "truncated")
      EXPECT_NE(report.find("is corrupt"), std::string::npos) << report;
    else
      EXPECT_EQ(report, "") << c.name << ": reported once per path, not again";
    cache.store(key, {"planned module", "object bytes"});  // the rebuild
    ASSERT_TRUE(cache.load(key)) << c.name;
  }
}

TEST_F(DiskCacheTest, ConcurrentWritersNeverLeaveATornEntry) {
  // Writers in three processes and two threads store the same key over and over (each
  // payload valid, of a different size) while this process reads. An entry exists before
  // any writer starts and a store replaces it by a rename, so every read is a hit holding
  // one whole payload, never a miss or a corrupt entry. The reader keeps reading until
  // every writer is done, so the verdict does not depend on who the scheduler runs first.
  auto payload = [](int writer) { return CacheEntry{"module " + std::to_string(writer), std::string(1000 * (writer + 1), char('a' + writer))}; };
  cache.store(key, payload(0));
  std::vector<pid_t> children;
  for (int writer = 0; writer < 3; ++writer) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      for (int i = 0; i < 200; ++i) cache.store(key, payload(writer));
      _exit(0);
    }
    children.push_back(pid);
  }
  std::atomic<int> threadsRunning = 2;
  std::vector<std::thread> threads;
  for (int writer = 3; writer < 5; ++writer)
    threads.emplace_back([&, writer] {
      for (int i = 0; i < 200; ++i) cache.store(key, payload(writer));
      --threadsRunning;
    });
  ::testing::internal::CaptureStderr();
  std::vector<int> statuses;
  auto childrenRunning = [&] {
    for (pid_t& pid : children) {
      int status = 0;
      if (pid > 0 && waitpid(pid, &status, WNOHANG) == pid) {
        statuses.push_back(status);
        pid = 0;
      }
    }
    return statuses.size() < 3;
  };
  int reads = 0, misses = 0;
  while (reads < 100 || threadsRunning > 0 || childrenRunning()) {
    ++reads;
    std::optional<CacheEntry> entry = cache.load(key);
    if (!entry) {
      ++misses;
      continue;
    }
    int writer = entry->module.back() - '0';
    ASSERT_TRUE(writer >= 0 && writer < 5) << entry->module;
    ASSERT_EQ(entry->object, payload(writer).object);
  }
  for (std::thread& t : threads) t.join();
  for (int status : statuses) EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  EXPECT_EQ(misses, 0) << "of " << reads << " reads";
  EXPECT_TRUE(cache.load(key));
}

TEST_F(DiskCacheTest, ADisabledCacheMissesAndStoresNothing) {
  DiskCache off("");
  EXPECT_FALSE(off.enabled());
  off.store(key, {"m", "o"});
  EXPECT_FALSE(off.load(key));
}

TEST_F(DiskCacheTest, AnUnwritableDirectoryIsReportedNotThrown) {
  DiskCache unwritable("/proc/kiln-cannot-write-here");
  ::testing::internal::CaptureStderr();
  EXPECT_NO_THROW(unwritable.store(key, {"m", "o"}));
  EXPECT_NO_THROW(unwritable.store(key, {"m", "o"}));
  std::string report = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(report.find("cannot write the compile cache"), std::string::npos) << report;
  EXPECT_EQ(report.find("cannot write", report.find("cannot write") + 1), std::string::npos)
      << "reported once: " << report;
  EXPECT_FALSE(unwritable.load(key));
}

}  // namespace
}  // namespace kiln::runtime

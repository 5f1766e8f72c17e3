// DiskCache: compiled programs on disk under $KILN_CACHE_DIR (default ~/.cache/kiln), one
// file per key, written to a temporary name and renamed, validated when read.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::runtime {

// What a cache entry holds: the planned module's bytecode (to rebuild the host tables)
// and the object file compiled from it.
struct CacheEntry {
  std::string module;
  std::string object;
};

class DiskCache {
 public:
  // The process's cache: $KILN_CACHE_DIR, else $HOME/.cache/kiln. KILN_CACHE_DIR=off
  // disables it (every load misses, stores do nothing). Read once.
  static const DiskCache& global();

  explicit DiskCache(std::string directory);

  // SHA-256 (hex) of `parts`, each length-prefixed so no two part lists collide.
  static std::string keyOf(const std::vector<std::string_view>& parts);

  // The file holding the code at `address` (a binary or shared library): its path, size and
  // modification time. As a key part (the address of a compiler's own function), it keeps
  // a rebuilt compiler from reusing old entries.
  static std::string fileIdentityOf(const void* address);

  // The entry stored for `key`, or nullopt when there is none or it fails validation (bad
  // magic or version, wrong key, truncated, checksum mismatch). A bad entry is reported on
  // stderr once per process and path, and removed, so the caller rebuilds and stores it.
  std::optional<CacheEntry> load(const std::string& key) const;

  // Writes `entry` for `key` to a unique temporary file in the cache directory, syncs it
  // and renames it over the entry's path, so readers see either the old file or the whole
  // new one, and concurrent writers of one key each leave a valid entry. Failures (no space, no
  // permission) are reported once and otherwise ignored: the cache only saves time.
  void store(const std::string& key, const CacheEntry& entry) const;

  bool enabled() const { return !directory_.empty(); }
  const std::string& directory() const { return directory_; }
  std::string pathOf(const std::string& key) const;

 private:
  std::string directory_;  // empty: disabled
};

}  // namespace kiln::runtime

// DiskCache (see DiskCache.h): the entry format, atomic writes and validation.
//
// An entry file is: the 8-byte magic "KILNOBJ\1", a u32 format version, the 64-character
// key, u64 sizes of the module and object, the SHA-256 of both, then the two payloads.
#include "runtime/cache/DiskCache.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>
#include <set>

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/SHA256.h"
#include "support/BinaryFile.h"

namespace kiln::runtime {
namespace {

constexpr char kMagic[8] = {'K', 'I', 'L', 'N', 'O', 'B', 'J', '\1'};
constexpr uint32_t kFormatVersion = 1;
constexpr size_t kKeyChars = 64;
constexpr size_t kDigestBytes = 32;
constexpr size_t kHeaderBytes = sizeof(kMagic) + 4 + kKeyChars + 8 + 8 + kDigestBytes;

// Prints `message` once per process for `what` (a path): a broken cache is worth one
// line, not one per call.
void reportOnce(const std::string& what, const std::string& message) {
  static std::mutex mutex;
  static std::set<std::string> reported;
  std::lock_guard lock(mutex);
  if (reported.insert(what).second) std::cerr << "kiln: " << message << "\n";
}

std::string digestOf(std::string_view module, std::string_view object) {
  llvm::SHA256 sha;
  sha.update(llvm::StringRef(module.data(), module.size()));
  sha.update(llvm::StringRef(object.data(), object.size()));
  auto digest = sha.final();
  return std::string(digest.begin(), digest.end());
}

template <class T>
void put(std::string& out, T value) {
  out.append(reinterpret_cast<const char*>(&value), sizeof(T));
}

template <class T>
T get(const std::string& in, size_t at) {
  T value;
  std::memcpy(&value, in.data() + at, sizeof(T));
  return value;
}

std::string defaultDirectory() {
  const char* configured = std::getenv("KILN_CACHE_DIR");
  if (configured && std::string_view(configured) == "off") return "";
  if (configured && *configured) return configured;
  const char* home = std::getenv("HOME");
  return home && *home ? std::string(home) + "/.cache/kiln" : "";
}

}  // namespace

const DiskCache& DiskCache::global() {
  static const DiskCache cache(defaultDirectory());
  return cache;
}

DiskCache::DiskCache(std::string directory) : directory_(std::move(directory)) {}

std::string DiskCache::keyOf(const std::vector<std::string_view>& parts) {
  llvm::SHA256 sha;
  for (std::string_view part : parts) {
    uint64_t size = part.size();
    sha.update(llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t*>(&size), sizeof(size)));
    sha.update(llvm::StringRef(part.data(), part.size()));
  }
  auto digest = sha.final();
  return llvm::toHex(llvm::ArrayRef<uint8_t>(digest.data(), digest.size()), /*LowerCase=*/true);
}

std::string DiskCache::fileIdentityOf(const void* address) {
  Dl_info info;
  if (!dladdr(address, &info) || !info.dli_fname) return "unknown";
  struct stat file;
  if (::stat(info.dli_fname, &file) != 0) return info.dli_fname;
  return std::string(info.dli_fname) + ":" + std::to_string(file.st_size) + ":" +
         std::to_string(file.st_mtim.tv_sec) + "." + std::to_string(file.st_mtim.tv_nsec);
}

std::string DiskCache::pathOf(const std::string& key) const {
  return directory_ + "/" + key + ".kilnobj";
}

std::optional<CacheEntry> DiskCache::load(const std::string& key) const {
  if (!enabled()) return std::nullopt;
  const std::string path = pathOf(key);
  std::ifstream file(path, std::ios::binary);
  if (!file) return std::nullopt;  // a miss
  std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  auto reject = [&](const std::string& why) -> std::optional<CacheEntry> {
    reportOnce(path, "cache entry " + path + " is corrupt (" + why + "); rebuilding it");
    std::error_code ignored;
    std::filesystem::remove(path, ignored);
    return std::nullopt;
  };
  if (bytes.size() < kHeaderBytes) return reject("shorter than its header");
  if (std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0) return reject("bad magic");
  size_t at = sizeof(kMagic);
  if (get<uint32_t>(bytes, at) != kFormatVersion) return reject("another format version");
  at += 4;
  if (bytes.compare(at, kKeyChars, key) != 0) return reject("it holds another key");
  at += kKeyChars;
  const uint64_t moduleSize = get<uint64_t>(bytes, at), objectSize = get<uint64_t>(bytes, at + 8);
  at += 16;
  if (moduleSize > bytes.size() || objectSize > bytes.size() ||
      bytes.size() != kHeaderBytes + moduleSize + objectSize)
    return reject("its sizes do not match the file");
  const std::string digest = bytes.substr(at, kDigestBytes);
  CacheEntry entry{bytes.substr(kHeaderBytes, moduleSize),
                   bytes.substr(kHeaderBytes + moduleSize, objectSize)};
  if (digestOf(entry.module, entry.object) != digest) return reject("checksum mismatch");
  return entry;
}

void DiskCache::store(const std::string& key, const CacheEntry& entry) const {
  if (!enabled()) return;
  std::string bytes(kMagic, sizeof(kMagic));
  put(bytes, kFormatVersion);
  bytes += key;
  put(bytes, uint64_t(entry.module.size()));
  put(bytes, uint64_t(entry.object.size()));
  bytes += digestOf(entry.module, entry.object);
  bytes += entry.module;
  bytes += entry.object;

  std::error_code error;
  std::filesystem::create_directories(directory_, error);
  try {
    support::AtomicFileWriter file(pathOf(key), "compile cache", SourceLoc::current());
    file.write(bytes);
    file.commit();
  } catch (const IOError& e) {
    reportOnce(directory_, std::string("cannot write the compile cache (set KILN_CACHE_DIR, or "
                                       "KILN_CACHE_DIR=off): ") + e.what());
  }
}

}  // namespace kiln::runtime

// Files as io reads and writes them: positional reads checked against the file's size, and
// writes that go to a temporary name and are renamed into place (docs/ARCHITECTURE.md §9).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "kiln/core/Error.h"

namespace kiln::support {

// A regular file opened for reading. Errors are IOErrors naming `op` and the file:
// "<op>: <path>: <what is wrong>".
class FileReader {
 public:
  FileReader(std::string path, std::string_view op, const SourceLoc& loc);
  ~FileReader();
  FileReader(const FileReader&) = delete;
  FileReader& operator=(const FileReader&) = delete;

  const std::string& path() const { return path_; }
  uint64_t size() const { return size_; }
  // Exactly `n` bytes at `offset`; IOError if the file ends first.
  void read(uint64_t offset, void* dst, size_t n) const;
  std::string read(uint64_t offset, size_t n) const;

  // Throws IOError "<op>: <path>: <args...>".
  template <class... Args>
  [[noreturn]] void fail(const Args&... args) const {
    throw IOError::make(loc_, op_, path_, ": ", args...);
  }

 private:
  std::string path_;
  std::string op_;
  SourceLoc loc_;
  int fd_ = -1;
  uint64_t size_ = 0;
};

// Writes `path` atomically: bytes go to "<path>.tmp.<pid>.<tid>", which commit() flushes to disk
// (fsync) and renames over `path`. Until then `path` is untouched; if the writer is
// destroyed uncommitted (an error, an exception) the temporary file is removed.
class AtomicFileWriter {
 public:
  AtomicFileWriter(std::string path, std::string_view op, const SourceLoc& loc);
  ~AtomicFileWriter();
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;

  void write(const void* data, size_t n);
  void write(std::string_view bytes) { write(bytes.data(), bytes.size()); }
  void commit();

 private:
  template <class... Args>
  [[noreturn]] void fail(const Args&... args) const {
    throw IOError::make(loc_, op_, path_, ": ", args...);
  }

  std::string path_;
  std::string tempPath_;
  std::string op_;
  SourceLoc loc_;
  int fd_ = -1;
  bool committed_ = false;
};

}  // namespace kiln::support

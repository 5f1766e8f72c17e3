// POSIX file access for io: pread loops, fsync and rename, with errno in every message.
#include "support/BinaryFile.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace kiln::support {

namespace {

std::string errnoText() { return std::strerror(errno); }

// The directory holding `path`, for the fsync that makes a rename durable.
std::string directoryOf(const std::string& path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

// ---- FileReader -----------------------------------------------------------------------

FileReader::FileReader(std::string path, std::string_view op, const SourceLoc& loc)
    : path_(std::move(path)), op_(op), loc_(loc) {
  fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) fail("cannot open: ", errnoText());
  // The destructor does not run when the constructor throws.
  auto closeAndFail = [&](const auto&... args) {
    ::close(fd_);
    fail(args...);
  };
  struct stat info;
  if (::fstat(fd_, &info) != 0) closeAndFail("cannot stat: ", errnoText());
  if (S_ISDIR(info.st_mode)) closeAndFail("is a directory");
  if (!S_ISREG(info.st_mode)) closeAndFail("is not a regular file");
  size_ = uint64_t(info.st_size);
}

FileReader::~FileReader() {
  if (fd_ >= 0) ::close(fd_);
}

void FileReader::read(uint64_t offset, void* dst, size_t n) const {
  char* out = static_cast<char*>(dst);
  size_t done = 0;
  while (done < n) {
    ssize_t got = ::pread(fd_, out + done, n - done, off_t(offset + done));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) fail("read failed at byte ", offset + done, ": ", errnoText());
    if (got == 0)
      fail("unexpected end of file at byte ", offset + done, " (did it change while being read?)");
    done += size_t(got);
  }
}

std::string FileReader::read(uint64_t offset, size_t n) const {
  std::string bytes(n, '\0');
  read(offset, bytes.data(), n);
  return bytes;
}

// ---- AtomicFileWriter -----------------------------------------------------------------

// "<path>.tmp.<pid>.<tid>": unique across processes and across threads of one process, so
// concurrent writers of one path never share a temporary file.
static std::string uniqueTempPath(const std::string& path) {
  return path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(::gettid());
}

AtomicFileWriter::AtomicFileWriter(std::string path, std::string_view op, const SourceLoc& loc)
    : path_(std::move(path)),
      tempPath_(uniqueTempPath(path_)),
      op_(op),
      loc_(loc) {
  fd_ = ::open(tempPath_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd_ < 0) fail("cannot create the temporary file ", tempPath_, ": ", errnoText());
}

AtomicFileWriter::~AtomicFileWriter() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_) ::unlink(tempPath_.c_str());
}

void AtomicFileWriter::write(const void* data, size_t n) {
  const char* in = static_cast<const char*>(data);
  size_t done = 0;
  while (done < n) {
    ssize_t put = ::write(fd_, in + done, n - done);
    if (put < 0 && errno == EINTR) continue;
    if (put < 0) fail("writing ", tempPath_, " failed: ", errnoText());
    done += size_t(put);
  }
}

void AtomicFileWriter::commit() {
  if (::fsync(fd_) != 0) fail("flushing ", tempPath_, " to disk failed: ", errnoText());
  int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) fail("closing ", tempPath_, " failed: ", errnoText());
  if (::rename(tempPath_.c_str(), path_.c_str()) != 0)
    fail("cannot rename ", tempPath_, " into place: ", errnoText());
  committed_ = true;
  // Make the rename itself durable; best effort, as some file systems refuse to sync
  // directories and the data is already safe under one of the two names.
  int dir = ::open(directoryOf(path_).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
}

}  // namespace kiln::support

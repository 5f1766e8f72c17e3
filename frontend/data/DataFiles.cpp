// Reading data set files: gzip detected by magic bytes, IOErrors naming the file.
#include "frontend/data/DataFiles.h"

#include <zlib.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>

namespace kiln::data::detail {

namespace {

struct GzCloser {
  void operator()(gzFile file) const { gzclose_r(file); }
};
using GzHandle = std::unique_ptr<std::remove_pointer_t<gzFile>, GzCloser>;

// What zlib reports for `file`, without the "<path>: " it puts in front.
std::string gzReason(gzFile file, const std::string& path, int* code) {
  std::string_view message = gzerror(file, code);
  if (message.starts_with(path + ": ")) message.remove_prefix(path.size() + 2);
  return std::string(message);
}

// An IOError for the state zlib is in after a failed or short read, if it is an error.
void throwIfGzError(gzFile file, const std::string& path, std::string_view op,
                    const SourceLoc& loc) {
  int code = Z_OK;
  const std::string reason = gzReason(file, path, &code);
  switch (code) {
    case Z_OK:
      return;
    case Z_ERRNO:
      throw IOError::make(loc, op, "cannot read ", path, ": ", reason);
    case Z_BUF_ERROR:  // zlib's "unexpected end of file"
      throw IOError::make(loc, op, path, ": truncated gzip data (the compressed stream ends early)");
    default:
      throw IOError::make(loc, op, path, ": corrupt gzip data (", reason, ")");
  }
}

}  // namespace

std::vector<uint8_t> readFileBytes(const std::string& path, std::string_view op,
                                   const SourceLoc& loc) {
  // gzread inflates gzip input and passes anything else through unchanged, deciding by
  // the magic bytes, so a gzipped file needs no ".gz" name and a plain one no special path.
  errno = 0;
  GzHandle file(gzopen(path.c_str(), "rb"));
  if (!file)
    throw IOError::make(loc, op, "cannot open ", path, ": ",
                        errno ? std::strerror(errno) : "out of memory");
  gzbuffer(file.get(), 1 << 18);
  constexpr size_t kChunk = 1 << 20;
  std::vector<uint8_t> bytes;
  while (true) {
    const size_t have = bytes.size();
    bytes.resize(have + kChunk);
    const int got = gzread(file.get(), bytes.data() + have, unsigned(kChunk));
    bytes.resize(have + size_t(std::max(got, 0)));
    if (got <= 0) break;
  }
  // A stream cut short is no read failure to gzread: it ends the data and leaves
  // Z_BUF_ERROR behind; so the state is checked however the loop ended.
  throwIfGzError(file.get(), path, op, loc);
  return bytes;
}

std::string findFile(const std::vector<std::string>& dirs, const std::string& name,
                     std::string_view op, const SourceLoc& loc) {
  namespace fs = std::filesystem;
  for (const std::string& dir : dirs)
    for (const std::string& candidate : {name, name + ".gz"}) {
      fs::path path = fs::path(dir) / candidate;
      std::error_code ignored;
      if (fs::is_regular_file(path, ignored)) return path.string();
    }
  std::string tried;
  for (size_t i = 0; i < dirs.size(); ++i)
    tried += (i == 0 ? "" : i + 1 == dirs.size() ? " or " : ", ") + dirs[i];
  std::error_code ignored;
  const bool noRoot = !fs::is_directory(dirs.front(), ignored);
  throw IOError::make(loc, op, "no ", name, " or ", name, ".gz in ", tried,
                      noRoot ? " (" + dirs.front() + " is not a directory)" : "");
}

void bytesToUnitFloats(const uint8_t* in, size_t count, float* out) {
  static const std::array<float, 256> table = [] {
    std::array<float, 256> t;
    for (int b = 0; b < 256; ++b) t[b] = float(b) / 255.0f;
    return t;
  }();
  for (size_t i = 0; i < count; ++i) out[i] = table[in[i]];
}

}  // namespace kiln::data::detail

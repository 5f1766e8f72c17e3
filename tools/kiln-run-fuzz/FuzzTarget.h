// What kiln-run-fuzz's targets share: fuzz inputs as files (kiln-run reads paths) and the
// line between an answer and a fault.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "kiln/core/Error.h"

// libFuzzer's entry points, defined by each target (DumpFuzzer.cpp, NpyFuzzer.cpp,
// RunFuzzer.cpp) and called by libFuzzer or by ReplayMain.cpp.
extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv);
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace kiln::fuzz {

// A directory of this process's own under /dev/shm (memory: millions of inputs cost no
// disk writes), else under the system's temporary directory; removed at exit.
class ScratchDir {
 public:
  ScratchDir();
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  // Writes `bytes` as the file `name` in the directory and returns its path.
  std::string write(std::string_view name, const uint8_t* bytes, size_t size) const;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// The process's scratch directory.
const ScratchDir& scratch();

// Runs `body`; a kiln::Error is Kiln's answer to a malformed input, so it is dropped.
// Anything else escapes: libFuzzer reports an uncaught exception as a crash, as it does
// sanitizer reports and signals.
template <class Body>
void ignoringKilnErrors(Body&& body) {
  try {
    body();
  } catch (const kiln::Error&) {
  }
}

}  // namespace kiln::fuzz

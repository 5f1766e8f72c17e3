#include "tools/kiln-run-fuzz/FuzzTarget.h"

#include <unistd.h>

#include <fstream>
#include <stdexcept>

namespace kiln::fuzz {

namespace {

std::filesystem::path scratchRoot() {
  std::error_code error;
  if (std::filesystem::is_directory("/dev/shm", error) && access("/dev/shm", W_OK) == 0)
    return "/dev/shm";
  return std::filesystem::temp_directory_path();
}

}  // namespace

ScratchDir::ScratchDir()
    : path_(scratchRoot() / ("kiln-run-fuzz." + std::to_string(getpid()))) {
  std::filesystem::create_directories(path_);
}

ScratchDir::~ScratchDir() {
  std::error_code error;
  std::filesystem::remove_all(path_, error);
}

std::string ScratchDir::write(std::string_view name, const uint8_t* bytes, size_t size) const {
  const std::string file = (path_ / name).string();
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes), std::streamsize(size));
  if (!out.flush()) throw std::runtime_error("kiln-run-fuzz: cannot write " + file);
  return file;
}

const ScratchDir& scratch() {
  static const ScratchDir dir;
  return dir;
}

}  // namespace kiln::fuzz

// An input file a kiln-run reads, through io::load_npy. Each input is the file's bytes.
#include "kiln/io/Npy.h"
#include "tools/kiln-run-fuzz/FuzzTarget.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) { return 0; }

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = kiln::fuzz::scratch().write("input.npy", data, size);
  kiln::fuzz::ignoringKilnErrors([&] { kiln::io::load_npy(path); });
  return 0;
}

// The dump a kiln-run reads, through jit::load's parse (bytecode or text) and checks only:
// KILN_JIT_BACKEND=INTERP, so nothing is compiled. Each input is the file's bytes.
#include <cstdlib>

#include "kiln/jit/Trace.h"
#include "tools/kiln-run-fuzz/FuzzTarget.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  setenv("KILN_JIT_BACKEND", "INTERP", 1);
  setenv("KILN_CACHE_DIR", "off", 1);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = kiln::fuzz::scratch().write("model", data, size);
  kiln::fuzz::ignoringKilnErrors([&] { kiln::jit::load(path); });
  return 0;
}

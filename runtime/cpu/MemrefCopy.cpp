// memrefCopy for statically linked builds (see MemrefCopy.h).
#include "runtime/cpu/MemrefCopy.h"

extern "C" void memrefCopy(int64_t elemSize, UnrankedMemRefType<char>* src, UnrankedMemRefType<char>* dst) {
  kiln::runtime::copyStridedMemref(elemSize, src, dst);
}

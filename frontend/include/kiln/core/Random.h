// Random numbers: Philox4x32-10, counter-based, so a (seed, offset) key fixes every value.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>

#include "kiln/core/Error.h"

namespace kiln {

class Storage;

// ---- The stream, exactly ---------------------------------------------------------------
//
// Compiled `kiln.rng` kernels (key tensor<2xi64> = [seed, offset]) reproduce these
// integers bit for bit; change nothing here without changing them.
//
//   philox   Philox4x32-10 of Salmon et al. (SC'11), as Random123's philox4x32_R(10, ...)
//            and PyTorch's CUDA Philox: multipliers 0xD2511F53, 0xCD9E8D57, key bumps
//            0x9E3779B9, 0xBB67AE85, 10 rounds.
//   key      (lo32(seed), hi32(seed)).
//   counter  block b of the stream at `offset` has the 64-bit counter c = offset + b
//            (mod 2^64) in words 0-1 and 0 (the subsequence) in words 2-3:
//            (lo32(c), hi32(c), 0, 0). `offset` therefore counts 128-bit blocks.
//   bits     32-bit word i is lane i % 4 of block i / 4.
//   float    uniform [0, 1): element i = (word i >> 8) * 2^-24 (4 per block).
//   double   uniform [0, 1): element i takes block i / 2, lanes 2k and 2k + 1 with
//            k = i % 2: u = lane(2k) | lane(2k+1) << 32, value = (u >> 11) * 2^-53
//            (2 per block).
//   normal   Box-Muller on the same layout, one pair of uniforms per pair of outputs:
//            float element i takes block i / 4, lanes 2p and 2p + 1 with p = (i % 4) / 2;
//            double element i takes block i / 2, lanes 0-1 and 2-3. With a the first
//            uniform's integer (24 or 53 bits) and b the second:
//              u1 = (a + 1) * 2^-24|2^-53  in (0, 1], so log never sees 0
//              u2 =  b      * 2^-24|2^-53  in [0, 1)
//              r  = sqrt(-2 log u1), t = 2pi * u2 (2pi rounded to the type)
//              even i: r * cos(t), odd i: r * sin(t)
//            computed in the element type (float math for float). The integers are exact
//            everywhere; the normals are bit-exact only where log/sqrt/sin/cos round the
//            same way, so compiled normals are compared to a tolerance.
//   advance  a draw of n values takes ceil(n / 4) blocks for float and ceil(n / 2) for
//            double (uniform and normal alike, see philoxBlocks); the generator's offset
//            moves past them, so draws never share a counter. 16-bit floats are drawn as
//            float and rounded.

using PhiloxCounter = std::array<uint32_t, 4>;
using PhiloxKey = std::array<uint32_t, 2>;

// One Philox4x32-10 block.
PhiloxCounter philox4x32_10(PhiloxCounter counter, PhiloxKey key);

// PyTorch's default seed, so an unseeded program is still deterministic.
inline constexpr uint64_t kDefaultSeed = 67280421310721ull;

// A position in a stream: the key of `kiln.rng`.
struct Generator {
  uint64_t seed = kDefaultSeed;
  uint64_t offset = 0;  // in 128-bit Philox blocks

  // Block `index` of the stream starting here.
  PhiloxCounter block(uint64_t index) const;

  // Hands out `blocks` fresh blocks: returns where they start and moves past them.
  Generator reserve(uint64_t blocks);

  friend bool operator==(const Generator&, const Generator&) = default;
};

// Blocks that n values of T take (T is float or double).
template <class T>
constexpr uint64_t philoxBlocks(uint64_t n) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8);
  constexpr uint64_t perBlock = 16 / sizeof(T);
  return n / perBlock + (n % perBlock != 0);
}

// The process's default generator (torch.manual_seed). All three are thread-safe.
void manual_seed(uint64_t seed,  // seed, offset 0; TraceError inside a traced function
                 const SourceLoc& loc = SourceLoc::current());
Generator defaultGenerator();     // a copy of the current state
void setDefaultGenerator(const Generator& state);
// The default generator's state as two int64 [seed, offset]: the frontend views it as the
// RNG key tensor (kiln.rng's key), so a trace threads the key through its state.
// Writes to it outside these functions race with them.
std::shared_ptr<Storage> defaultGeneratorStorage();
static_assert(sizeof(Generator) == 2 * sizeof(int64_t));
// What factories call: reserves blocks from the default generator.
Generator reserveDefault(uint64_t blocks);

// Elements first .. first + out.size() - 1 of the stream at `at` (see the mapping above).
// Pure functions of (at, first), so a range split across threads gives the same values.
void fillRandomBits(const Generator& at, std::span<uint32_t> out, uint64_t first = 0);
void fillUniform(const Generator& at, std::span<float> out, uint64_t first = 0);
void fillUniform(const Generator& at, std::span<double> out, uint64_t first = 0);
void fillNormal(const Generator& at, std::span<float> out, uint64_t first = 0);
void fillNormal(const Generator& at, std::span<double> out, uint64_t first = 0);

}  // namespace kiln

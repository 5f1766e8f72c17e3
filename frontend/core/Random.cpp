#include "kiln/core/Random.h"

#include <cmath>
#include <mutex>

#include "kiln/core/Dispatcher.h"
#include "kiln/core/Storage.h"

namespace kiln {

namespace {

constexpr uint32_t kMul0 = 0xD2511F53u, kMul1 = 0xCD9E8D57u;
constexpr uint32_t kBump0 = 0x9E3779B9u, kBump1 = 0xBB67AE85u;

void mulhilo(uint32_t a, uint32_t b, uint32_t* hi, uint32_t* lo) {
  uint64_t product = uint64_t(a) * b;
  *hi = uint32_t(product >> 32);
  *lo = uint32_t(product);
}

PhiloxCounter philoxRound(const PhiloxCounter& x, const PhiloxKey& key) {
  uint32_t hi0, lo0, hi1, lo1;
  mulhilo(kMul0, x[0], &hi0, &lo0);
  mulhilo(kMul1, x[2], &hi1, &lo1);
  return {hi1 ^ x[1] ^ key[0], lo1, hi0 ^ x[3] ^ key[1], lo0};
}

std::mutex gDefaultMutex;

// The default generator's state lives in a Storage of two int64 [seed, offset] so the
// frontend can view it as the RNG key tensor a trace threads through its state.
const std::shared_ptr<Storage>& stateStorage() {
  static const std::shared_ptr<Storage> storage = [] {
    auto s = Storage::allocate(sizeof(Generator));
    *static_cast<Generator*>(s->data()) = Generator{};
    return s;
  }();
  return storage;
}

Generator* defaultState() { return static_cast<Generator*>(stateStorage()->data()); }

// Decodes one block into the values it holds, per the mapping in Random.h.
template <class T>
using BlockValues = std::array<T, 16 / sizeof(T)>;

// Lanes 2k (low) and 2k + 1 (high) as one 64-bit word.
uint64_t wide(const PhiloxCounter& r, int k) {
  return uint64_t(r[2 * k]) | uint64_t(r[2 * k + 1]) << 32;
}

BlockValues<float> uniformValues(const PhiloxCounter& r) {
  BlockValues<float> v;
  for (int lane = 0; lane < 4; ++lane) v[lane] = float(r[lane] >> 8) * 0x1.0p-24f;
  return v;
}

BlockValues<double> uniformValues64(const PhiloxCounter& r) {
  return {double(wide(r, 0) >> 11) * 0x1.0p-53, double(wide(r, 1) >> 11) * 0x1.0p-53};
}

// Box-Muller from the integer parts of two uniforms; `scale` is 2^-24 or 2^-53.
template <class T>
std::array<T, 2> boxMuller(uint64_t a, uint64_t b, T scale) {
  constexpr T kTwoPi = T(6.283185307179586476925286766559);
  T u1 = T(a + 1) * scale;
  T u2 = T(b) * scale;
  T r = std::sqrt(T(-2) * std::log(u1));
  T t = kTwoPi * u2;
  return {r * std::cos(t), r * std::sin(t)};
}

BlockValues<float> normalValues(const PhiloxCounter& r) {
  auto lo = boxMuller<float>(r[0] >> 8, r[1] >> 8, 0x1.0p-24f);
  auto hi = boxMuller<float>(r[2] >> 8, r[3] >> 8, 0x1.0p-24f);
  return {lo[0], lo[1], hi[0], hi[1]};
}

BlockValues<double> normalValues64(const PhiloxCounter& r) {
  return boxMuller<double>(wide(r, 0) >> 11, wide(r, 1) >> 11, 0x1.0p-53);
}

// Writes elements first.. of the stream, decoding each needed block once.
template <class T, class Decode>
void fillFromBlocks(const Generator& at, std::span<T> out, uint64_t first, Decode decode) {
  constexpr uint64_t kPerBlock = 16 / sizeof(T);
  size_t j = 0;
  while (j < out.size()) {
    uint64_t i = first + j;
    BlockValues<T> values = decode(at.block(i / kPerBlock));
    for (uint64_t lane = i % kPerBlock; lane < kPerBlock && j < out.size(); ++lane, ++j)
      out[j] = values[lane];
  }
}

}  // namespace

PhiloxCounter philox4x32_10(PhiloxCounter counter, PhiloxKey key) {
  for (int round = 0; round < 10; ++round) {
    if (round > 0) key = {key[0] + kBump0, key[1] + kBump1};
    counter = philoxRound(counter, key);
  }
  return counter;
}

PhiloxCounter Generator::block(uint64_t index) const {
  uint64_t c = offset + index;
  return philox4x32_10({uint32_t(c), uint32_t(c >> 32), 0, 0},
                       {uint32_t(seed), uint32_t(seed >> 32)});
}

Generator Generator::reserve(uint64_t blocks) {
  Generator start = *this;
  offset += blocks;
  return start;
}

void manual_seed(uint64_t seed, const SourceLoc& loc) {
  // The generator is state the tracer binds when an op reads it; a reset here would not be
  // recorded, so later calls would silently continue the old stream.
  if (currentDispatchHook())
    throw TraceError::make(loc, "manual_seed",
                           "cannot reseed the generator inside a traced function: the reset "
                           "would not be recorded. Seed before calling it");
  setDefaultGenerator({seed, 0});
}

std::shared_ptr<Storage> defaultGeneratorStorage() { return stateStorage(); }

Generator defaultGenerator() {
  std::lock_guard lock(gDefaultMutex);
  return *defaultState();
}

void setDefaultGenerator(const Generator& state) {
  std::lock_guard lock(gDefaultMutex);
  *defaultState() = state;
}

Generator reserveDefault(uint64_t blocks) {
  std::lock_guard lock(gDefaultMutex);
  return defaultState()->reserve(blocks);
}

void fillRandomBits(const Generator& at, std::span<uint32_t> out, uint64_t first) {
  fillFromBlocks(at, out, first, [](const PhiloxCounter& r) { return r; });
}

void fillUniform(const Generator& at, std::span<float> out, uint64_t first) {
  fillFromBlocks(at, out, first, uniformValues);
}

void fillUniform(const Generator& at, std::span<double> out, uint64_t first) {
  fillFromBlocks(at, out, first, uniformValues64);
}

void fillNormal(const Generator& at, std::span<float> out, uint64_t first) {
  fillFromBlocks(at, out, first, normalValues);
}

void fillNormal(const Generator& at, std::span<double> out, uint64_t first) {
  fillFromBlocks(at, out, first, normalValues64);
}

}  // namespace kiln

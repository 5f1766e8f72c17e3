// Traced-versus-eager parity: a table of cases, one per public op or composite, each a
// function of tensors (plus state it owns), and the runner that traces a case in one mode
// and compares every call with the eager run of the same function, bitwise.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "kiln/core/Tensor.h"

namespace kiln::e2e {

using Tensors = std::vector<Tensor>;
// Builds one input (or state) tensor; calls pass different seeds, so later calls of a
// trace see new values of the same shape and dtype.
using Maker = std::function<Tensor(uint64_t seed)>;

// One copy of a case's function and the state it reads and writes. The runner makes two,
// one traced and one eager, from the same seeds, and compares their state after each call.
struct Instance {
  std::function<Tensors(const Tensors& inputs)> fn;
  Tensors state;
};

struct OpCase {
  std::string name;  // [A-Za-z0-9_]: it names the gtest case
  std::vector<Maker> inputs;
  std::function<Instance()> make;
  // Changes the first call's inputs (the recording call's), given the instance's state:
  // for aliasing that only that call has, such as one tensor passed twice.
  std::function<void(Tensors& inputs, const Tensors& state)> firstCall;
};

// ---- inputs -------------------------------------------------------------------------------
// Standard normals (floating dtypes) or normals·10 converted (integers), from `seed`.
Maker normal(Shape shape, DType dtype = kFloat32);
// |normal| + 0.5: the domain of log, sqrt, rsqrt and of a pow base.
Maker positive(Shape shape, DType dtype = kFloat32);
// Integers uniform in [low, high).
Maker ints(int64_t low, int64_t high, Shape shape, DType dtype = kInt64);
Maker bools(Shape shape);
// f32 normals with NaN, ±inf, ±0, a denormal and ±1e30 at positions that move with the
// seed: the values where kernels that round alike can still disagree.
Maker specials(Shape shape);
// A transposed (non-contiguous) view of f32 normals, of shape `shape` (2-d).
Maker transposed(Shape shape);
// f32 normals, contiguous on the first call and a permuted (non-contiguous) view of the
// same shape on later ones: the recording must not depend on the layout it saw.
Maker layoutChanging(Shape shape);
// f32 values whose sum over `dims` shows how a float32 sum pairs its elements (element
// 32k + l with 32k + 16 + l, l < 16, counted in the order of the reduced dims; see
// frontend/core/kernels/Reduce.h): pairs of 1 and 3 * 2^-25 round up by 2^-25 in
// float32, every other pair is exact, and the ±1s cancel, so the paired sum is a third
// more than the exact one. Scaled by a power of two (64 to 1024) per output.
Maker pairRounding(Shape shape, Shape dims);

// ---- cases --------------------------------------------------------------------------------
namespace detail {
template <class R>
Tensors asTensors(R result) {
  if constexpr (std::is_same_v<R, Tensor>) return {std::move(result)};
  else if constexpr (std::is_same_v<R, Tensors>) return result;
  else return std::apply([](auto&... t) { return Tensors{t...}; }, result);
}
}  // namespace detail

// A case without state: `fn(const Tensors& x)` returns a Tensor, a tuple of them or Tensors.
template <class Fn>
OpCase op(std::string name, std::vector<Maker> inputs, Fn fn) {
  std::function<Tensors(const Tensors&)> f = [fn](const Tensors& x) { return detail::asTensors(fn(x)); };
  return {std::move(name), std::move(inputs), [f] { return Instance{f, {}}; }};
}

// A case whose function owns state made by `state` (seeds fixed, so both copies start
// equal): `fn(const Tensors& x, Tensors s)`; `s` shares the state's storage.
template <class Fn>
OpCase withState(std::string name, std::vector<Maker> inputs, std::vector<Maker> state, Fn fn) {
  auto make = [state, fn] {
    Tensors s;
    for (size_t k = 0; k < state.size(); ++k) s.push_back(state[k](900 + k));
    std::function<Tensors(const Tensors&)> f = [fn, s](const Tensors& x) {
      return detail::asTensors(fn(x, s));
    };
    return Instance{f, s};
  };
  return {std::move(name), std::move(inputs), make};
}

// A case whose state is made by `makeState` (for state tensors that alias each other).
template <class Fn>
OpCase withState(std::string name, std::vector<Maker> inputs, std::function<Tensors()> makeState,
                 Fn fn) {
  auto make = [makeState, fn] {
    Tensors s = makeState();
    std::function<Tensors(const Tensors&)> f = [fn, s](const Tensors& x) {
      return detail::asTensors(fn(x, s));
    };
    return Instance{f, s};
  };
  return {std::move(name), std::move(inputs), make};
}

// `c` with `firstCall` set.
OpCase onFirstCall(OpCase c, std::function<void(Tensors& inputs, const Tensors& state)> firstCall);

// Every case, in a stable order (OpCases.cpp).
const std::vector<OpCase>& allCases();

// ---- running ------------------------------------------------------------------------------
// Empty when `got` and `want` have the same dtype, shape and bytes (contiguous copies);
// else what differs, with the first differing element.
std::string bitwiseDifference(const Tensor& got, const Tensor& want);

// How close a traced result must be to the eager one. Bitwise (the default) for the
// interpreter; compiled kernels approximate math functions and reassociate sums, so they
// are held to |got - want| <= atol + rtol |want| on floating dtypes (rtol by dtype, NaN
// matching NaN) and stay exact on integers and bools.
struct Tolerance {
  double rtolF32 = 0, rtolF64 = 0, rtolHalf = 0, atol = 0;
  bool bitwise() const { return rtolF32 == 0 && rtolF64 == 0 && rtolHalf == 0 && atol == 0; }
};
// The tolerance compiled programs are held to: 1e-5 relative for f32 (the bar).
inline constexpr Tolerance kCompiled{1e-5, 1e-10, 1e-2, 1e-6};
// bitwiseDifference, or for a non-bitwise `tolerance` the first element outside it.
std::string difference(const Tensor& got, const Tensor& want, const Tolerance& tolerance);

// Traces the case (symbolic or by value) and calls it three times with inputs from new
// seeds: the first call records, the second and third run the recording. Each call is
// compared with the eager function on the same inputs from the same manual_seed: outputs,
// state and the default generator afterwards. Returns one line per difference, each
// naming the call; an exception in either run is one line too.
std::vector<std::string> runCase(const OpCase& c, bool symbolic, const Tolerance& tolerance = {});

// The case traced (symbolic or by value) and called once with runCase's first inputs:
// the recorded program as jit::Traced::graph_str gives it (the kiln dialect's text). For
// tests that plan and compile the recordings themselves (test/gpu/NvrtcKernelsAssembleTest);
// the call runs on whatever KILN_JIT_BACKEND selects (INTERP compiles nothing).
std::string recordedGraph(const OpCase& c, bool symbolic);

}  // namespace kiln::e2e

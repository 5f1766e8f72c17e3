#include "test/e2e/Parity.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <utility>
#include <vector>

#include "kiln/core/Ops.h"
#include "kiln/core/Random.h"
#include "kiln/jit/Trace.h"

namespace kiln::e2e {

// ---- inputs -------------------------------------------------------------------------------

Maker normal(Shape shape, DType dtype) {
  return [shape, dtype](uint64_t seed) {
    manual_seed(seed);
    if (isFloatingPoint(dtype)) return randn(shape, dtype);
    return convert(mul(randn(shape), 10.0), dtype);
  };
}

Maker positive(Shape shape, DType dtype) {
  return [shape, dtype](uint64_t seed) {
    manual_seed(seed);
    return add(abs(randn(shape, dtype)), 0.5);
  };
}

Maker ints(int64_t low, int64_t high, Shape shape, DType dtype) {
  return [=](uint64_t seed) {
    manual_seed(seed);
    return randint(low, high, shape, dtype);
  };
}

Maker bools(Shape shape) {
  return [shape](uint64_t seed) {
    manual_seed(seed);
    return gt(randn(shape), 0.0);
  };
}

Maker specials(Shape shape) {
  return [shape](uint64_t seed) {
    manual_seed(seed);
    Tensor x = randn(shape);
    constexpr float kInf = std::numeric_limits<float>::infinity();
    const float values[] = {std::numeric_limits<float>::quiet_NaN(), kInf, -kInf, 0.0f, -0.0f,
                            1e-40f, 1e30f, -1e30f};
    float* data = x.data_ptr<float>();
    // Rotated by the seed, so each call puts them at other positions.
    for (size_t i = 0; i < std::size(values) && int64_t(i) < x.numel(); ++i)
      data[(i + seed) % size_t(x.numel())] = values[i];
    return x;
  };
}

Maker layoutChanging(Shape shape) {
  return [shape](uint64_t seed) {
    manual_seed(seed);
    if (seed < 200) return randn(shape);  // the first call's seeds are 100 + i
    Shape reversed(shape.rbegin(), shape.rend());
    Shape back;
    for (int64_t d = int64_t(shape.size()) - 1; d >= 0; --d) back.push_back(d);
    return randn(reversed).permute(back);
  };
}

Maker pairRounding(Shape shape, Shape dims) {
  return [shape, dims](uint64_t seed) {
    Shape perm, packedShape;  // kept dims, then the reduced ones: the order summed in
    for (int64_t d = 0; d < int64_t(shape.size()); ++d)
      if (std::find(dims.begin(), dims.end(), d) == dims.end()) perm.push_back(d);
    perm.insert(perm.end(), dims.begin(), dims.end());
    int64_t n = 1;
    for (int64_t d : dims) n *= shape[size_t(d)];
    for (int64_t d : perm) packedShape.push_back(shape[size_t(d)]);
    std::vector<float> v(static_cast<size_t>(numel(shape)), 0.0f);
    for (int64_t o = 0; o * n < int64_t(v.size()); ++o) {
      const float scale = std::ldexp(1.0f, int(o % 5) + 6);  // sums well above atol
      float* row = v.data() + o * n;
      float* lastOne = nullptr;
      int64_t balance = 0;
      for (int64_t i = 0; i < n; ++i) {
        if (i % 32 >= 16) continue;  // set with its partner
        const bool up = (i + uint64_t(seed)) % 2 == 0;
        row[i] = up ? scale : -scale;
        if (i + 16 < n) row[i + 16] = up ? 0x3p-25f * scale : 0.0f;
        balance += up ? 1 : -1;
        lastOne = row + i;
      }
      if (balance != 0 && lastOne) *lastOne = 0.0f;  // the ±1s cancel exactly
    }
    Shape inverse(perm.size());
    for (size_t i = 0; i < perm.size(); ++i) inverse[size_t(perm[i])] = int64_t(i);
    return tensor(v, packedShape).permute(inverse).contiguous();
  };
}

OpCase onFirstCall(OpCase c, std::function<void(Tensors& inputs, const Tensors& state)> firstCall) {
  c.firstCall = std::move(firstCall);
  return c;
}

Maker transposed(Shape shape) {
  return [shape](uint64_t seed) {
    manual_seed(seed);
    return randn({shape[1], shape[0]}).t();
  };
}

// ---- comparing ----------------------------------------------------------------------------

namespace {

std::string hexValue(const Tensor& contiguous, int64_t index) {
  std::ostringstream out;
  out << std::hexfloat << kiln::detail::readElementAsDouble(contiguous, index);
  return out.str();
}

std::string describe(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "an exception that is not a std::exception";
  }
}

struct CallResult {
  Tensors outputs;
  Tensors state;
  Generator generator;
  std::exception_ptr error;
};

// Runs `fn` from manual_seed(seed) and keeps what it returned, the state and the
// generator; `state` is cloned so a later call cannot change what this one left.
template <class Fn>
CallResult runFrom(uint64_t seed, const Tensors& state, Fn&& fn) {
  CallResult r;
  manual_seed(seed);
  try {
    r.outputs = fn();
  } catch (...) {
    r.error = std::current_exception();
  }
  r.generator = defaultGenerator();
  for (const Tensor& s : state) r.state.push_back(s.clone());
  return r;
}

}  // namespace

std::string bitwiseDifference(const Tensor& got, const Tensor& want) {
  std::ostringstream out;
  if (!got.defined() || !want.defined()) {
    if (got.defined() != want.defined())
      out << (got.defined() ? "defined" : "undefined") << " where eager gives "
          << (want.defined() ? "a tensor" : "an undefined tensor");
    return out.str();
  }
  if (got.dtype() != want.dtype() || got.sizes() != want.sizes()) {
    out << got.dtype() << " " << got.sizes() << " where eager gives " << want.dtype() << " "
        << want.sizes();
    return out.str();
  }
  Tensor a = got.contiguous(), b = want.contiguous();
  const size_t width = a.element_size();
  const auto* pa = static_cast<const unsigned char*>(a.rawData());
  const auto* pb = static_cast<const unsigned char*>(b.rawData());
  int64_t differing = 0, first = -1;
  for (int64_t i = 0; i < a.numel(); ++i)
    if (std::memcmp(pa + size_t(i) * width, pb + size_t(i) * width, width) != 0) {
      if (first < 0) first = i;
      ++differing;
    }
  if (differing == 0) return "";
  out << differing << " of " << a.numel() << " elements differ; first at " << first << ": "
      << hexValue(a, first) << " where eager gives " << hexValue(b, first);
  return out.str();
}

std::string difference(const Tensor& got, const Tensor& want, const Tolerance& tolerance) {
  std::string bits = bitwiseDifference(got, want);
  if (bits.empty() || tolerance.bitwise() || !got.defined() || !want.defined() ||
      got.dtype() != want.dtype() || got.sizes() != want.sizes() || !isFloatingPoint(got.dtype()))
    return bits;
  const double rtol = got.dtype() == kFloat32   ? tolerance.rtolF32
                      : got.dtype() == kFloat64 ? tolerance.rtolF64
                                                : tolerance.rtolHalf;
  Tensor a = got.to(kFloat64).contiguous(), b = want.to(kFloat64).contiguous();
  const double* pa = a.data_ptr<double>();
  const double* pb = b.data_ptr<double>();
  for (int64_t i = 0; i < a.numel(); ++i) {
    if (std::isnan(pa[i]) && std::isnan(pb[i])) continue;
    if (pa[i] == pb[i] || std::abs(pa[i] - pb[i]) <= tolerance.atol + rtol * std::abs(pb[i]))
      continue;
    std::ostringstream out;
    out << "element " << i << " is " << pa[i] << " where eager gives " << pb[i]
        << " (beyond rtol " << rtol << ", atol " << tolerance.atol << ")";
    return out.str();
  }
  return "";
}

namespace {

template <size_t>
using TensorArg = Tensor;

// A traced case behind one signature, whatever its arity.
struct TracedCase {
  std::function<Tensors(const Tensors&)> call;
  std::function<size_t()> numTraces;
  std::function<std::string()> graph;
};

// jit::trace needs a function of N tensor arguments: wrap `fn` in one of the case's arity.
template <size_t... I>
TracedCase traceArity(std::function<Tensors(const Tensors&)> fn, jit::TraceOptions options,
                      std::index_sequence<I...>) {
  auto traced = jit::trace([fn](TensorArg<I>... x) { return fn(Tensors{x...}); }, std::move(options));
  return {[traced](const Tensors& inputs) { return traced(inputs[I]...); },
          [traced] { return traced.num_traces(); }, [traced] { return traced.graph_str(); }};
}

TracedCase traceCase(std::function<Tensors(const Tensors&)> fn, size_t arity, bool symbolic) {
  jit::TraceOptions options{.symbolic = symbolic};
  switch (arity) {
    case 0: return traceArity(std::move(fn), options, std::make_index_sequence<0>{});
    case 1: return traceArity(std::move(fn), options, std::make_index_sequence<1>{});
    case 2: return traceArity(std::move(fn), options, std::make_index_sequence<2>{});
    case 3: return traceArity(std::move(fn), options, std::make_index_sequence<3>{});
    case 4: return traceArity(std::move(fn), options, std::make_index_sequence<4>{});
    case 5: return traceArity(std::move(fn), options, std::make_index_sequence<5>{});
  }
  throw std::invalid_argument("a case takes at most 5 inputs");
}

void compareCall(int call, const CallResult& traced, const CallResult& eager,
                 const Tolerance& tolerance, std::vector<std::string>& problems) {
  const std::string at = "call " + std::to_string(call) + ": ";
  if (eager.error) {
    problems.push_back(at + "the eager run throws (a broken case): " + describe(eager.error));
    return;
  }
  if (traced.error) {
    problems.push_back(at + "the traced run throws: " + describe(traced.error));
    return;
  }
  if (traced.outputs.size() != eager.outputs.size()) {
    problems.push_back(at + std::to_string(traced.outputs.size()) + " outputs where eager gives " +
                       std::to_string(eager.outputs.size()));
    return;
  }
  for (size_t i = 0; i < eager.outputs.size(); ++i)
    if (std::string d = difference(traced.outputs[i], eager.outputs[i], tolerance); !d.empty())
      problems.push_back(at + "output " + std::to_string(i) + ": " + d);
  for (size_t k = 0; k < eager.state.size(); ++k)
    if (std::string d = difference(traced.state[k], eager.state[k], tolerance); !d.empty())
      problems.push_back(at + "state " + std::to_string(k) + ": " + d);
  if (!(traced.generator == eager.generator))
    problems.push_back(at + "the generator is at (seed " + std::to_string(traced.generator.seed) +
                       ", offset " + std::to_string(traced.generator.offset) +
                       ") where eager leaves it at (seed " + std::to_string(eager.generator.seed) +
                       ", offset " + std::to_string(eager.generator.offset) + ")");
}

}  // namespace

std::string recordedGraph(const OpCase& c, bool symbolic) {
  Instance instance = c.make();
  TracedCase traced = traceCase(instance.fn, c.inputs.size(), symbolic);
  Tensors inputs;
  for (size_t i = 0; i < c.inputs.size(); ++i) inputs.push_back(c.inputs[i](100 + i));
  if (c.firstCall) c.firstCall(inputs, instance.state);
  traced.call(inputs);
  return traced.graph();
}

std::vector<std::string> runCase(const OpCase& c, bool symbolic, const Tolerance& tolerance) {
  std::vector<std::string> problems;
  Instance tracedCopy = c.make(), eagerCopy = c.make();
  TracedCase traced;
  try {
    traced = traceCase(tracedCopy.fn, c.inputs.size(), symbolic);
  } catch (const std::exception& e) {
    return {std::string("jit::trace throws: ") + e.what()};
  }
  for (int call = 1; call <= 3; ++call) {
    Tensors inputs;
    for (size_t i = 0; i < c.inputs.size(); ++i) inputs.push_back(c.inputs[i](100 * call + i));
    Tensors tracedInputs = inputs, eagerInputs = inputs;
    if (call == 1 && c.firstCall) {
      c.firstCall(tracedInputs, tracedCopy.state);
      c.firstCall(eagerInputs, eagerCopy.state);
    }
    const uint64_t seed = 7000 + call;
    CallResult t = runFrom(seed, tracedCopy.state, [&] { return traced.call(tracedInputs); });
    CallResult e = runFrom(seed, eagerCopy.state, [&] { return eagerCopy.fn(eagerInputs); });
    compareCall(call, t, e, tolerance, problems);
  }
  // Every call has the same key: a second recording would mean calls 2 and 3 compared
  // an eager rerun, not the recording.
  if (size_t n = traced.numTraces(); n != 1)
    problems.push_back("recorded " + std::to_string(n) + " times; all three calls share one key");
  if (!problems.empty()) problems.push_back("the recording:\n" + traced.graph());
  return problems;
}

}  // namespace kiln::e2e

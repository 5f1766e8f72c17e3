// The differential runner: one eager reference run (plus float32 and float64 shadows for
// the tolerances), then each config traced and called with the same inputs.
#include "tools/kiln-fuzz/Runner.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <optional>
#include <stdexcept>
#include <utility>

#include "kiln/core/Autograd.h"
#include "kiln/core/Ops.h"
#include "kiln/core/Random.h"
#include "kiln/jit/Trace.h"
#include "tools/kiln-fuzz/Analysis.h"
#include "tools/kiln-fuzz/Compare.h"

namespace kiln::fuzz {

namespace {

// What one run of every call left: per call, the outputs and the state after it.
struct Calls {
  std::vector<Tensors> outputs, state;
};

// Seeds as test/e2e/Parity.cpp uses them, so a printed case replays the same values.
uint64_t inputSeed(int call, size_t i) { return uint64_t(100 * call) + i; }
uint64_t stateSeed(size_t k) { return 900 + k; }
uint64_t runSeed(int call) { return uint64_t(7000 + call); }

Tensors makeState(const Program& p, std::optional<DType> as) {
  Tensors state;
  std::vector<Leaf> leaves = stateLeaves(p);
  for (size_t k = 0; k < leaves.size(); ++k) state.push_back(makeLeaf(leaves[k], stateSeed(k), as));
  return state;
}

// The program each call runs: `p` itself, or at that call's batch size.
std::vector<Program> programsPerCall(const Program& p, bool dynamic, int calls) {
  if (!dynamic) return std::vector<Program>(size_t(calls), p);
  std::vector<Program> programs;
  for (CallSizes sizes : dynamicBatches(p)) programs.push_back(atBatch(p, sizes));
  return programs;
}

Tensors makeInputs(const Program& p, int call, std::optional<DType> as) {
  Tensors inputs;
  std::vector<Leaf> leaves = inputLeaves(p);
  for (size_t i = 0; i < leaves.size(); ++i) inputs.push_back(makeLeaf(leaves[i], inputSeed(call, i), as));
  return inputs;
}

// Copies that later calls cannot change (outputs may alias state updated in place).
Tensors snapshot(const Tensors& tensors) {
  Tensors copies;
  for (const Tensor& t : tensors) copies.push_back(t.defined() ? t.detach().clone() : Tensor());
  return copies;
}

// How much a normalization in `p` can magnify rounding: x - mean carries rounding in
// units of |x|, and the normalization multiplies it by 1 / sqrt(var + eps), which is large
// for rows (layer_norm) or channels (batch_norm) that are nearly constant, as a broadcast
// makes them. The largest such factor over the program's normalizations as this call's
// float64 values show it, at least 1 (found by seed 117964: rows made constant by a
// broadcast, where eager gave 3.5e-14 and compiled code 0).
double normalizationGain(const Program& p, const Tensors& values) {
  double gain = 1;
  for (size_t n = 0; n < p.nodes.size(); ++n) {
    const Node& node = p.nodes[n];
    if (node.op != Op::LayerNorm && node.op != Op::BatchNorm) continue;
    Tensor x = values[size_t(node.args[0])].detach().to(kFloat64);
    Tensor rows;
    if (node.op == Op::LayerNorm) {  // rows over the normalized (trailing) dims
      int64_t length = 1;
      for (int64_t d : node.ints) length *= d;
      rows = x.reshape({-1, length});
    } else {  // channels: dim 1 to the front, each channel's values a row
      rows = x.transpose(0, 1).reshape({x.sizes()[1], -1});
    }
    if (rows.numel() == 0) continue;
    Tensor centered = sub(rows, mean(rows, {1}, true));
    const double smallest = amin(mean(mul(centered, centered), {1})).item<double>();
    gain = std::max(gain, 1 / std::sqrt(std::max(smallest, 0.0) + 1e-5));
  }
  return gain;
}

Calls runEager(const std::vector<Program>& programs, std::optional<DType> as, double* gain = nullptr) {
  Calls r;
  Tensors state = makeState(programs.at(0), as);
  for (int call = 1; call <= int(programs.size()); ++call) {
    const Program& p = programs[size_t(call - 1)];
    Tensors inputs = makeInputs(p, call, as);
    manual_seed(runSeed(call));
    Tensors values;
    r.outputs.push_back(snapshot(evaluate(p, inputs, state, as, gain ? &values : nullptr)));
    r.state.push_back(snapshot(state));
    if (gain) {
      NoGradGuard noGrad;
      *gain = std::max(*gain, normalizationGain(p, values));
    }
  }
  return r;
}

// ---- tracing a program of any arity ------------------------------------------------------
using Call = std::function<Tensors(const Tensors&)>;

struct TracedProgram {
  Call call;
  std::function<size_t()> numTraces;
  std::function<std::string()> graph;
};

template <size_t>
using TensorArg = Tensor;

template <size_t... I>
TracedProgram traceArity(Call fn, jit::TraceOptions options, std::index_sequence<I...>) {
  auto traced = jit::trace([fn](TensorArg<I>... x) { return fn(Tensors{x...}); }, std::move(options));
  return {[traced](const Tensors& in) { return traced(in[I]...); }, [traced] { return traced.num_traces(); },
          [traced] { return traced.graph_str(); }};
}

template <size_t... N>
TracedProgram traceAny(Call fn, size_t arity, jit::TraceOptions options, std::index_sequence<N...>) {
  std::optional<TracedProgram> traced;
  ((arity == N ? (void)(traced = traceArity(fn, options, std::make_index_sequence<N>{})) : (void)0), ...);
  if (!traced) throw std::invalid_argument("kiln-fuzz: too many inputs");
  return *traced;
}

// `backend` empty: KILN_JIT_BACKEND's.
TracedProgram traceProgram(Call fn, size_t arity, bool symbolic, const std::string& backend = "") {
  // A recording per batch size when a batch program's recordings do not merge.
  const int retraces = int(dynamicBatches(Program{}).size()) + 2;
  return traceAny(std::move(fn), arity,
                  {.symbolic = symbolic, .max_retraces = retraces, .compile = {.backend = backend}},
                  std::make_index_sequence<kMaxInputs + 1>{});
}

// ---- comparing ---------------------------------------------------------------------------
// The longest reduction behind the gradients and state: the backward pass reduces over
// every broadcast, so also the largest value's size.
int64_t programLength(const Program& p, const std::vector<Facts>& facts) {
  int64_t length = 1;
  for (size_t n = 0; n < p.nodes.size(); ++n) {
    int64_t size = 1;
    for (int64_t d : p.nodes[n].shape) size *= d;
    length = std::max({length, facts[n].reduce, size});
  }
  return length;
}

std::string outputName(const Program& p, size_t j) {
  if (j < p.outputs.size()) return "output " + std::to_string(j) + " (v" + std::to_string(p.outputs[j]) + ")";
  const int param = gradParams(p)[j - p.outputs.size()];
  return "s[" + std::to_string(p.nodes[size_t(param)].slot) + "].grad()";
}

// What eager code gives for each call, and what the tolerances need.
struct Reference {
  std::vector<Program> programs;  // per call (a batch program at that call's size)
  Calls eager;
  std::optional<Calls> shadow32, shadow64;  // only for compiled configs
  std::vector<std::vector<Facts>> facts;    // per call
  double gain = 1;  // normalizationGain over the calls (compiled configs only)
};

Tolerance toleranceFor(const Reference& ref, bool bitwise, int call, size_t j, bool state) {
  if (bitwise) return {};
  const size_t c = size_t(call - 1);
  const Program& p = ref.programs[c];
  const std::vector<Facts>& facts = ref.facts[c];
  const bool forward = !state && j < p.outputs.size();
  const int64_t length = forward ? facts[size_t(p.outputs[j])].reduce : programLength(p, facts);
  bool single = forward && facts[size_t(p.outputs[j])].single;
  for (size_t n = 0; !forward && n < p.nodes.size(); ++n) single = single || facts[n].single;
  const auto& pick = [&](const Calls& calls) -> const Tensor& { return state ? calls.state[c][j] : calls.outputs[c][j]; };
  // A gradient sums products of the forward values; one that is 0 in exact arithmetic
  // (through a normalization's mean) is rounding in units of those values, so its floor
  // is the largest value the program holds, not only what the call returned.
  double largestValue = 0;
  for (const Facts& f : facts) largestValue = std::max({largestValue, f.mag(), f.reducedMag});
  // A nearly constant row's normalization magnifies that rounding by ref.gain, once in the
  // forward values and once more in their gradients.
  const double floor = forward ? facts[size_t(p.outputs[j])].reducedMag * ref.gain
                               : std::max(largestMagnitude(ref.shadow64->outputs[c]), largestValue) *
                                     ref.gain * ref.gain;
  return compiledTolerance(pick(ref.eager), pick(*ref.shadow32), pick(*ref.shadow64), length,
                           single ? kFloat32 : kFloat64, floor);
}

// A batch program's sizes: "batch 2", or "batch 2, seq 9" with a second dynamic size.
std::string sizesName(const Program& atCall) {
  return "batch " + std::to_string(atCall.batch) + (atCall.seq > 0 ? ", seq " + std::to_string(atCall.seq) : "");
}

// "call 3", with the sizes where the call has them: "call 3 (batch 2)".
std::string callName(int call, const Program& atCall) {
  return "call " + std::to_string(call) + (atCall.batch > 0 ? " (" + sizesName(atCall) + ")" : "");
}

std::optional<std::string> compareCall(const Reference& ref, bool bitwise, int call, const Tensors& outputs,
                                       const Tensors& state) {
  const size_t c = size_t(call - 1);
  const Program& p = ref.programs[c];
  const std::string at = callName(call, p) + ": ";
  if (outputs.size() != ref.eager.outputs[c].size())
    return at + std::to_string(outputs.size()) + " outputs where eager gives " +
           std::to_string(ref.eager.outputs[c].size());
  for (size_t j = 0; j < outputs.size(); ++j) {
    const Tolerance t = toleranceFor(ref, bitwise, call, j, false);
    if (std::string d = difference(outputs[j], ref.eager.outputs[c][j], t); !d.empty())
      return at + outputName(p, j) + ": " + d;
  }
  for (size_t k = 0; k < state.size(); ++k) {
    const Tolerance t = toleranceFor(ref, bitwise, call, k, true);
    if (std::string d = difference(state[k], ref.eager.state[c][k], t); !d.empty())
      return at + "state s[" + std::to_string(k) + "]: " + d;
  }
  return std::nullopt;
}

// The traced function: the program at the sizes of its inputs, as code that computes its
// reshape sizes from x[i].size(d) does.
Call programCall(const Program& p, const Tensors& state) {
  const auto [bSlot, bDim] = sizeSource(p, 1);
  const auto [sSlot, sDim] = sizeSource(p, -1);
  return [=](const Tensors& in) {
    if (p.batch == 0) return evaluate(p, in, state);
    const int64_t b = bSlot >= 0 ? in.at(size_t(bSlot)).size(bDim) : p.batch;  // none: a minimizer's cut
    const int64_t s = sSlot >= 0 ? in.at(size_t(sSlot)).size(sDim) : p.seq;
    return evaluate(atBatch(p, b, s), in, state);
  };
}

std::optional<Problem> runConfig(const Program& p, const Config& config, const Reference& ref,
                                 DynamicCounts* counts) {
  setenv("KILN_JIT_BACKEND", config.backend.c_str(), 1);
  const bool bitwise = config.backend == "INTERP";
  Tensors state = makeState(p, std::nullopt);
  auto problem = [&](std::string kind, std::string message) {
    return Problem{config.name(), std::move(kind), std::move(message)};
  };
  TracedProgram traced;
  try {
    traced = traceProgram(programCall(p, state), inputLeaves(p).size(), config.symbolic);
  } catch (const std::exception& e) {
    return problem("threw", std::string("jit::trace threw: ") + e.what());
  }
  bool merged = false;
  for (int call = 1; call <= int(ref.programs.size()); ++call) {
    const Program& atCall = ref.programs[size_t(call - 1)];
    Tensors inputs = makeInputs(atCall, call, std::nullopt), outputs;
    manual_seed(runSeed(call));
    try {
      outputs = traced.call(inputs);
    } catch (const std::exception& e) {
      return problem("threw", callName(call, atCall) + ": " + (bitwise ? "traced" : "compiled") +
                                  " run threw: " + e.what());
    }
    if (auto d = compareCall(ref, bitwise, call, snapshot(outputs), snapshot(state))) return problem("mismatch", *d);
    if (config.dynamic && call == 2) {
      merged = traced.numTraces() == 1;
      if (counts) ++(merged ? counts->merged : counts->stayedStatic);
    }
  }
  const size_t n = traced.numTraces();
  if (!config.dynamic && n != 1)
    return problem("retraced", "recorded " + std::to_string(n) + " times; every call has the same key");
  if (config.dynamic && merged && n != 1) {
    std::string sizes;
    for (const Program& atCall : ref.programs) sizes += (sizes.empty() ? "(" : "), (") + sizesName(atCall);
    return problem("retraced", "the recordings at " + sizesName(ref.programs[0]) + " and " +
                                   sizesName(ref.programs[1]) + " merged, yet " + sizes + ") left " +
                                   std::to_string(n) + " recordings; the program never reads its sizes");
  }
  return std::nullopt;
}

// Eager runs of `programs` (one per call) for the reference, with the float32 and float64
// shadows when a compiled config compares with it.
Reference reference(std::vector<Program> programs, bool compiled) {
  Reference ref;
  for (const Program& p : programs) ref.facts.push_back(analyze(p));
  ref.eager = runEager(programs, std::nullopt);
  if (compiled) {
    ref.shadow32 = runEager(programs, kFloat32);
    ref.shadow64 = runEager(programs, kFloat64, &ref.gain);
  }
  ref.programs = std::move(programs);
  return ref;
}

}  // namespace

std::vector<Problem> check(const Program& p, const RunOptions& options, DynamicCounts* counts) {
  std::optional<Reference> fixed, dynamic;  // for the fixed-shape configs, and the dynamic ones
  try {
    for (bool isDynamic : {false, true}) {
      bool used = false, compiled = false;
      for (const Config& c : options.configs)
        if (c.dynamic == isDynamic) used = true, compiled |= c.backend != "INTERP";
      // No configs: eager alone, to see that it runs the program (at every batch size).
      const bool eagerOnly = options.configs.empty() && (!isDynamic || p.batch > 0);
      if (!used && !eagerOnly) continue;
      if (isDynamic && p.batch == 0)
        return {{"eager", "invalid", "a dynamic config needs a batch program (generated with GenOptions::batch)"}};
      (isDynamic ? dynamic : fixed) = reference(programsPerCall(p, isDynamic, options.calls), compiled);
    }
  } catch (const std::exception& e) {
    return {{"eager", "invalid", std::string("eager rejected the program (a generator bug): ") + e.what()}};
  }
  std::vector<Problem> problems;
  for (const Config& c : options.configs)
    if (auto problem = runConfig(p, c, *(c.dynamic ? dynamic : fixed), counts)) problems.push_back(*problem);
  return problems;
}

std::string recordedGraph(const Program& p, bool symbolic) {
  Tensors state = makeState(p, std::nullopt);
  TracedProgram traced = traceProgram(programCall(p, state), inputLeaves(p).size(), symbolic, "INTERP");
  Tensors inputs = makeInputs(p, 1, std::nullopt);
  manual_seed(runSeed(1));
  traced.call(inputs);
  return traced.graph();
}

}  // namespace kiln::fuzz

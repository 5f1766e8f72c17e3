// jit::trace: records a C++ function of tensors once into a kiln program and runs the
// program on later calls, as MegEngine's @trace (ARCHITECTURE.md §1, §5). No MLIR in this header.
#pragma once

#include <charconv>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "kiln/core/OpDef.h"
#include "kiln/core/Tensor.h"

namespace kiln::jit {

// Which backend runs a traced or loaded program, and how the compiler treats it.
struct CompileOptions {
  // Group elementwise ops and reductions into fused kernels (kiln-fuse). Off, each op is
  // a kernel or an eager host op of its own: slower, and a way to tell a fusion problem
  // from another one.
  bool fuse = true;
  // The most tensors one fused kernel may read.
  int64_t fuse_max_inputs = 16;
  // The backend, by name: "MLIR" (the CPU code generator, the default), "INTERP" (the
  // reference interpreter). Empty: KILN_JIT_BACKEND decides, and unset, MLIR. A named
  // backend must take the program (its failure is an error); the default one hands what it
  // cannot compile to the interpreter. An unknown or unbuilt name is a CompileError that
  // lists the available backends.
  std::string backend;
};

// Check mode (KILN_CHECK=1 turns it on for every trace and loaded graph): each compiled
// call also runs on the reference interpreter, and a difference beyond tolerance is a
// CheckError naming the first kiln op whose result differs, its source line and both
// values. Several times slower; for finding a suspected compiler bug, not for production.
struct CheckOptions {
  bool enabled = false;
  // A value agrees when |compiled - interpreted| <= atol * max(1, the tensor's largest
  // |interpreted|) + rtol * |interpreted|. Negative: the dtype's default (float32 1e-4 and
  // 1e-5, float64 1e-9 and 1e-12, float16/bfloat16 1e-2 and 1e-3; integers and bool exact).
  double rtol = -1;
  double atol = -1;
};

// A dim of the traced function's tensor inputs whose size may change between calls.
struct DynamicDim {
  int64_t input = -1;  // which tensor input; -1: every input of rank above `dim`
  int64_t dim = 0;
};

struct TraceOptions {
  // Trace with placeholders that hold no values (reading one is a TraceError); by default
  // the first call runs eagerly while it records, and values it reads are baked in.
  bool symbolic = false;
  // State (parameters, buffers) becomes constants of its value at trace time; needed by
  // dump(). Without it, state is bound by reference and later calls see current values.
  bool capture_as_const = false;
  // The recorded function's name in the module.
  std::string name = "main";
  // New input shapes, dtypes or static arguments retrace, at most this many times; then
  // the call fails with the history, or runs eagerly when fallback_to_eager is set.
  int max_retraces = 8;
  bool fallback_to_eager = false;
  // Dynamic shapes (docs/ARCHITECTURE.md, "Dynamic shapes"). When a call differs from an
  // earlier recording only in the sizes of some input dims (each at least 2), the new
  // recording and that one are merged into one program with `?` dims that serves later
  // calls of any size there (1 and up): the first call at a new shape records it again to
  // check that it is that program (code that branches on a size gets a recording of its
  // own), and the program is specialized and compiled per new shape. KILN_LOG=retrace
  // says which dims became dynamic, or why they could not. With automatic_dynamic off, only `dynamic_dims` may become dynamic.
  bool automatic_dynamic = true;
  // Dims expected to vary (e.g. {{.input = -1, .dim = 0}}: the batch of every input):
  // merging the recordings for them is always tried, and a failure is a warning on
  // stderr, not only a log line.
  std::vector<DynamicDim> dynamic_dims = {};
  CompileOptions compile = {};
  CheckOptions check = {};
};

// How dump() writes a traced program (docs/ARCHITECTURE.md §5; MegEngine's trace.dump).
struct DumpOptions {
  enum class Format { Bytecode, Text };
  Format format = Format::Bytecode;  // MLIR bytecode (.mlirbc) or the textual form (.mlir)
  // Names for the inputs and outputs (kiln.name on the arguments and results), which
  // kiln-run uses for --input name=file.npy and the files it writes; default x0, x1, ...
  // and y0, y1, ....
  std::vector<std::string> input_names = {};
  std::vector<std::string> output_names = {};
  bool locations = false;  // keep the user's source locations in the file
};

// A dumped program loaded back: runs on the reference interpreter (or, later, the
// compiler backend KILN_JIT_BACKEND selects).
class LoadedGraph {
 public:
  struct Impl;
  explicit LoadedGraph(std::shared_ptr<Impl> impl);
  std::vector<Tensor> operator()(const std::vector<Tensor>& inputs) const;
  const std::vector<std::string>& input_names() const;
  const std::vector<std::string>& output_names() const;
  std::string str() const;  // the program in textual form

 private:
  std::shared_ptr<Impl> impl_;
};

// Reads a file written by dump() (bytecode or text); IOError for an unreadable or invalid
// file, naming the path and what is wrong.
LoadedGraph load(const std::string& path, const SourceLoc& loc = SourceLoc::current());
// The same, run by the backend `options` name (CompileOptions::backend).
LoadedGraph load(const std::string& path, const CompileOptions& options,
                 const SourceLoc& loc = SourceLoc::current());

namespace detail {

// One call's inputs and static arguments as the cache sees them.
struct CallKey {
  std::vector<TensorMeta> inputs;
  std::vector<bool> requiresGrad;
  std::string statics;  // the non-tensor arguments, printed
  bool gradMode = true;
  std::string modes;  // training mode of the named modules: "model=train;"
};

// Collects names for state tensors before a recording starts.
class NameSink {
 public:
  virtual ~NameSink() = default;
  virtual void name(const Tensor& tensor, std::string name) = 0;
  // The name given to `tensor` so far, or "" if none.
  virtual std::string nameOf(const Tensor& tensor) const = 0;
};
using Namer = std::function<void(NameSink&)>;

// The MLIR side of a traced function (frontend/jit/Trace.cpp).
class TracedCore {
 public:
  using Body = std::function<std::vector<Tensor>(std::span<const Tensor> inputs)>;

  // Namers run in the order added at the start of every recording.
  void addNamer(Namer namer);
  // `probe` reports a named module tree's training mode ("train", "eval", or one 0/1 per
  // module when mixed); part of every call's key, as docs/ARCHITECTURE.md §5 asks.
  void addModeProbe(std::string name, std::function<std::string()> probe);

  TracedCore(TraceOptions options, SourceLoc loc);
  ~TracedCore();

  // Runs one call: records `body` if `key` is new (eagerly, or symbolically and then
  // runs the recording), else runs the program recorded for it; returns the outputs.
  std::vector<Tensor> call(std::span<const Tensor> inputs, CallKey key, const Body& body);

  std::string graphStr(bool locations) const;
  size_t numTraces() const;
  size_t numCompiles() const;
  void dump(const std::string& path, const DumpOptions& options, const SourceLoc& loc) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

template <class T>
constexpr bool kIsTensor = std::is_same_v<std::remove_cvref_t<T>, Tensor>;

template <class T>
struct IsTensorTuple : std::false_type {};
template <class... T>
struct IsTensorTuple<std::tuple<T...>> : std::bool_constant<(std::is_same_v<T, Tensor> && ...)> {};
template <class A, class B>
struct IsTensorTuple<std::pair<A, B>>
    : std::bool_constant<std::is_same_v<A, Tensor> && std::is_same_v<B, Tensor>> {};
template <class T>
constexpr bool kIsTensorTuple = IsTensorTuple<T>::value;

// Static arguments become part of the cache key; only values with a stable printed form.
template <class T>
void appendStatic(std::ostringstream& out, const T& value) {
  using V = std::remove_cvref_t<T>;
  static_assert(std::is_arithmetic_v<V> || std::is_enum_v<V> || std::is_convertible_v<V, std::string>,
                "jit::trace: a non-tensor argument must be a number, bool, enum or string (it "
                "is a static part of the cache key)");
  if constexpr (std::is_enum_v<V>) out << static_cast<std::underlying_type_t<V>>(value) << ';';
  else if constexpr (std::is_floating_point_v<V>) out << std::hexfloat << value << ';';
  else out << value << ';';
}

template <class R>
std::vector<Tensor> flatten(R&& result) {
  using V = std::remove_cvref_t<R>;
  if constexpr (std::is_same_v<V, Tensor>) {
    return {std::forward<R>(result)};
  } else if constexpr (std::is_same_v<V, std::vector<Tensor>>) {
    return std::vector<Tensor>(result.begin(), result.end());
  } else {
    return std::apply([](const auto&... t) { return std::vector<Tensor>{Tensor(t)...}; }, result);
  }
}

template <class R>
R unflatten(std::vector<Tensor> outputs) {
  if constexpr (std::is_same_v<R, Tensor>) {
    return std::move(outputs.at(0));
  } else if constexpr (std::is_same_v<R, std::vector<Tensor>>) {
    return outputs;
  } else {
    return [&]<size_t... I>(std::index_sequence<I...>) {
      return R{std::move(outputs.at(I))...};
    }(std::make_index_sequence<std::tuple_size_v<R>>{});
  }
}

// Which tensor input the I-th argument is (the count of tensor arguments before it).
template <size_t I, class... Args>
constexpr size_t tensorIndex() {
  constexpr bool isTensor[] = {kIsTensor<Args>..., false};
  size_t n = 0;
  for (size_t i = 0; i < I; ++i) n += isTensor[i];
  return n;
}

// The body of an exclude_from_trace block, type-erased: inputs to outputs.
using HostBody = std::function<std::vector<Tensor>(std::span<const Tensor>)>;

// Runs `body` on `inputs` now and, while a trace records on this thread, records it as a
// kiln.callback that every later call of the traced function runs again.
std::vector<Tensor> runExcluded(HostBody body, std::vector<Tensor> inputs, const SourceLoc& loc);

}  // namespace detail

// Runs fn(tensors...) eagerly on every call of a traced function, as MegEngine's
// exclude_from_trace: in the recorded program it is a kiln.callback whose inputs are
// `tensors` and whose outputs are fn's result (void, a Tensor, a tuple or a vector of
// Tensors). fn is kept and called again on later calls, so it must capture only what
// outlives the traced function (host counters, loggers), never the traced function's
// locals by reference; pass tensors as arguments instead. Outside a trace it just calls
// fn. A symbolic trace that meets one records again by value, reads still forbidden.
template <class F, class... T>
auto exclude_from_trace(F fn, const T&... tensors) {
  static_assert((detail::kIsTensor<T> && ...), "exclude_from_trace: pass tensors only");
  using R = std::invoke_result_t<F&, const T&...>;
  detail::HostBody body = [fn = std::move(fn)](std::span<const Tensor> in) mutable {
    return [&]<size_t... I>(std::index_sequence<I...>) -> std::vector<Tensor> {
      if constexpr (std::is_void_v<R>) {
        fn(in[I]...);
        return {};
      } else {
        return detail::flatten(fn(in[I]...));
      }
    }(std::index_sequence_for<T...>{});
  };
  std::vector<Tensor> outputs =
      detail::runExcluded(std::move(body), {tensors...}, SourceLoc::current());
  if constexpr (!std::is_void_v<R>) return detail::unflatten<R>(std::move(outputs));
}

// A traced function: call it like the original. Copies share the same traces.
template <class Fn>
class Traced {
 public:
  Traced(Fn fn, TraceOptions options, SourceLoc loc)
      : fn_(std::make_shared<Fn>(std::move(fn))),
        core_(std::make_shared<detail::TracedCore>(std::move(options), loc)) {}

  template <class... Args>
  std::invoke_result_t<Fn&, Args&...> operator()(Args&&... args) const {
    using R = std::invoke_result_t<Fn&, Args&...>;
    static_assert(std::is_void_v<R> || std::is_same_v<R, Tensor> ||
                      std::is_same_v<R, std::vector<Tensor>> || detail::kIsTensorTuple<R>,
                  "jit::trace: the function must return void, a Tensor, a tuple of Tensors or "
                  "a std::vector<Tensor>");
    detail::CallKey key;
    std::vector<Tensor> inputs;
    inputs.reserve(sizeof...(Args));
    // Made only for a call with a static argument: constructing a stream (its locale)
    // was a measurable part of a small traced call's dispatch.
    std::optional<std::ostringstream> statics;
    auto collect = [&]<class A>(const A& arg) {
      if constexpr (detail::kIsTensor<A>) inputs.push_back(arg);
      else detail::appendStatic(statics ? *statics : statics.emplace(), arg);
    };
    (collect(args), ...);
    if (statics) key.statics = statics->str();
    auto body = [&](std::span<const Tensor> in) -> std::vector<Tensor> {
      return [&]<size_t... I>(std::index_sequence<I...>) -> std::vector<Tensor> {
        auto pick = [&]<size_t J, class A>(A& arg) -> decltype(auto) {
          if constexpr (detail::kIsTensor<A>) return Tensor(in[detail::tensorIndex<J, Args...>()]);
          else return (arg);
        };
        if constexpr (std::is_void_v<R>) {
          std::invoke(*fn_, pick.template operator()<I>(args)...);
          return {};
        } else {
          return detail::flatten(std::invoke(*fn_, pick.template operator()<I>(args)...));
        }
      }(std::index_sequence_for<Args...>{});
    };
    std::vector<Tensor> outputs = core_->call(inputs, std::move(key), body);
    if constexpr (!std::is_void_v<R>) return detail::unflatten<R>(std::move(outputs));
  }

  // Names the parameters and buffers of `module` (a holder such as nn::Linear, or a
  // shared_ptr to a module) as state in the recorded program: "<prefix>.<dotted path>",
  // e.g. model.0.weight, as nn::Graph's register_module does. Their gradients become
  // "<name>.grad". Unnamed state is "state.<k>". The module tree's training mode becomes
  // part of the cache key: model->eval() between calls records again.
  template <class Module>
  Traced& name_module(const std::string& prefix, const Module& module) {
    core_->addNamer([prefix, module](detail::NameSink& sink) {
      for (const auto& [name, t] : module->named_parameters()) sink.name(t, prefix + "." + name);
      for (const auto& [name, t] : module->named_buffers()) sink.name(t, prefix + "." + name);
    });
    core_->addModeProbe(prefix, [module] {
      std::string bits;
      for (const auto& m : module->modules()) bits += m->is_training() ? '1' : '0';
      if (bits.find('0') == std::string::npos) return std::string("train");
      if (bits.find('1') == std::string::npos) return std::string("eval");
      return bits;
    });
    return *this;
  }

  // Names an optimizer's per-parameter state (momentum buffers, Adam moments, steps) as
  // "<prefix>.<slot>.<parameter's name>", e.g. opt.momentum_buffer.model.0.weight, and
  // each group's learning rate "<prefix>.lr.<group>". Name the modules first; `optimizer`
  // must outlive this traced function. The learning rates are state (0-d tensors the
  // program reads on every call), so a scheduler's step never records again; the other
  // hyperparameters are numbers the recording bakes in, so they are part of the key: a
  // changed momentum records again instead of running with the old one.
  template <class Optimizer>
  Traced& name_optimizer(const std::string& prefix, const Optimizer& optimizer) {
    core_->addNamer([prefix, &optimizer](detail::NameSink& sink) {
      const auto& groups = optimizer.param_groups();
      for (size_t g = 0; g < groups.size(); ++g) {
        sink.name(groups[g].options().lr_tensor(), prefix + ".lr." + std::to_string(g));
        for (const Tensor& p : groups[g].params())
          if (const auto* slots = optimizer.state(p)) {
            std::string param = sink.nameOf(p);
            for (const auto& [slot, t] : *slots)
              sink.name(t, prefix + "." + slot + "." + (param.empty() ? "?" : param));
          }
      }
    });
    core_->addModeProbe(prefix, [&optimizer] {
      std::string baked;
      for (const auto& group : optimizer.param_groups())
        baked += (baked.empty() ? "" : ";") + baked_hyperparameters(group.options());  // ADL: kiln/optim
      return baked;
    });
    return *this;
  }

  // The recorded program(s) in the kiln dialect's textual form; with `locations`, each op
  // carries the user's source line.
  std::string graph_str(bool locations = false) const { return core_->graphStr(locations); }
  // How many times the function was recorded (1 after the first call, more on retraces).
  size_t num_traces() const { return core_->numTraces(); }
  // How many programs the backend made: one per recording that runs again, plus one per
  // new input shape a dynamic recording (TraceOptions::automatic_dynamic) is specialized
  // to. With the MLIR backend, each is a compile (or a disk-cache hit).
  size_t num_compiles() const { return core_->numCompiles(); }

  // Writes the recorded program to `path` atomically (a temporary name, then rename), its
  // constants as dense_resource blobs. Needs capture_as_const (a dumped graph has no
  // state to bind) and exactly one recording; TraceError otherwise.
  void dump(const std::string& path, const DumpOptions& options = {},
            const SourceLoc& loc = SourceLoc::current()) const {
    core_->dump(path, options, loc);
  }

 private:
  std::shared_ptr<Fn> fn_;
  std::shared_ptr<detail::TracedCore> core_;
};

template <class Fn>
Traced<std::decay_t<Fn>> trace(Fn&& fn, TraceOptions options = {},
                               const SourceLoc& loc = SourceLoc::current()) {
  return Traced<std::decay_t<Fn>>(std::forward<Fn>(fn), std::move(options), loc);
}

}  // namespace kiln::jit

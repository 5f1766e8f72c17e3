// nn::Graph: OneFlow's nn.Graph over jit::trace. A subclass registers modules and
// optimizers in its constructor and describes one step in build(...); calling the graph
// traces build symbolically on the first call and runs the compiled program after that
// (docs/ARCHITECTURE.md §1 and "nn::Graph").
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <typeinfo>
#include <unordered_map>
#include <utility>
#include <vector>

#include "kiln/core/OrderedDict.h"
#include "kiln/core/Tensor.h"
#include "kiln/jit/Trace.h"
#include "kiln/nn/Module.h"
#include "kiln/nn/ModuleHolder.h"
#include "kiln/optim/LRScheduler.h"
#include "kiln/optim/Optimizer.h"

namespace kiln::nn {

// A graph's settings (OneFlow's GraphConfig). They shape the traced programs, so they are
// fixed by the graph's first call; changing one after it is an Error.
class GraphConfig {
 public:
  // True once an optimizer is added: the graph trains.
  bool training() const { return training_; }

  // Gradients accumulate over n calls and the optimizers step on the n-th. Each call's
  // gradients are scaled by 1/n (OneFlow scales the loss), so n calls on batches b1..bn
  // update as one call on their concatenation with a mean-reduced loss. Error for n < 1.
  GraphConfig& set_gradient_accumulation_steps(int64_t n,
                                               const SourceLoc& loc = SourceLoc::current());
  int64_t gradient_accumulation_steps() const { return accumulationSteps_; }

  // OneFlow's switch for fusing an elementwise add into the op that produces one of its
  // operands. Stored and printed only: kiln-fuse groups elementwise ops by itself and the
  // compiler takes no option for it yet.
  GraphConfig& allow_fuse_add_to_output(bool on = true,
                                        const SourceLoc& loc = SourceLoc::current());
  bool fuse_add_to_output_allowed() const { return fuseAddToOutput_; }

  // Whether the compiler fuses elementwise ops and reductions into kernels
  // (jit::CompileOptions::fuse, kiln-fuse); off, every op runs on its own, which tells a
  // fusion problem from another one.
  GraphConfig& enable_fusion(bool on = true, const SourceLoc& loc = SourceLoc::current());
  bool fusion_enabled() const { return fusion_; }

  // Which backend runs the graph's programs (jit::CompileOptions::backend: "MLIR",
  // "INTERP"); empty, the default, leaves it to KILN_JIT_BACKEND. A Kiln extension: OneFlow
  // has one compiler. An unknown name is a CompileError at the graph's first call.
  GraphConfig& set_backend(std::string name, const SourceLoc& loc = SourceLoc::current());
  const std::string& backend() const { return backend_; }

  // Data-parallel training over the ranks of an MPI job (kiln::distributed; link
  // //frontend:distributed and call distributed::init() before the first call). Each rank
  // calls the graph with its own batch; each update step averages the optimized
  // parameters' gradients over the ranks before the optimizers step, inside the traced
  // program: one kiln.all_reduce per bucket of at most `bucket_cap_mb` MiB, as
  // nn::DistributedDataParallel buckets them. The replicas start equal: the first call
  // replaces every rank's parameters and buffers of the registered modules with rank 0's,
  // as nn::DistributedDataParallel's construction does. A Kiln extension: OneFlow says
  // this with placements and SBP.
  // Error for a cap that is not positive; at the first call, for a graph that does not train.
  GraphConfig& enable_data_parallel(bool on = true, double bucket_cap_mb = 25,
                                    const SourceLoc& loc = SourceLoc::current());
  bool data_parallel_enabled() const { return dataParallel_; }

  // The batch (dim 0 of every input) varies between calls, as at the short last batch of
  // an epoch: the graph's programs are traced with it named dynamic
  // (jit::TraceOptions::dynamic_dims), so each is compiled once for every batch size from
  // its first call (OneFlow compiles each size again). A Kiln extension.
  GraphConfig& enable_dynamic_batch(bool on = true, const SourceLoc& loc = SourceLoc::current());
  bool dynamic_batch_enabled() const { return dynamicBatch_; }

  // GraphConfig(training=True, gradient_accumulation_steps=1, allow_fuse_add_to_output=False,
  //             enable_fusion=True)
  // (and ", backend='HALIDE'" once set_backend named one, ", data_parallel=True" once
  // enable_data_parallel turned it on, ", dynamic_batch=True" once enable_dynamic_batch did)
  std::string str() const;

 private:
  friend class GraphBase;
  void checkMutable(std::string_view what, const SourceLoc& loc) const;

  bool training_ = false;
  int64_t accumulationSteps_ = 1;
  bool fuseAddToOutput_ = false;
  bool fusion_ = true;
  std::string backend_;
  bool dataParallel_ = false;
  double bucketCapMb_ = 25;
  bool dynamicBatch_ = false;
  std::string fixedBy_;  // the graph's name, once its first call fixed the settings
};

// Everything of a Graph that does not depend on the subclass's type: modules, optimizers,
// config, the traced programs, printing and debug output. Used through Graph<Derived>.
// Not copyable or movable (its programs call back into it). One call at a time.
class GraphBase {
 public:
  virtual ~GraphBase();
  GraphBase(const GraphBase&) = delete;
  GraphBase& operator=(const GraphBase&) = delete;

  // "TrainGraph_0": the subclass's name and how many graphs of that class came before.
  const std::string& name() const { return name_; }
  // The subclass's name: "TrainGraph".
  const std::string& class_name() const { return className_; }
  GraphConfig& config() { return config_; }
  const GraphConfig& config() const { return config_; }
  bool training() const { return config_.training(); }
  // Whether the first call has happened: the programs are traced and the config fixed.
  bool is_built() const { return built_; }

  // Makes `module` part of the graph under `name`: its parameters and buffers are the
  // programs' state ("<name>.0.weight"), its printing is the graph's MODULE lines, and its
  // state_dict is the graph's under "<name>.". Error after the first call, for a name
  // already registered, an empty name or one with a dot.
  template <class M>
  std::shared_ptr<M> register_module(std::string name, std::shared_ptr<M> module,
                                     const SourceLoc& loc = SourceLoc::current()) {
    checkNewModule(name, module != nullptr, loc);
    return root_->register_module(std::move(name), std::move(module), loc);
  }
  template <class M>
  std::shared_ptr<M> register_module(std::string name, const ModuleHolder<M>& holder,
                                     const SourceLoc& loc = SourceLoc::current()) {
    return register_module(std::move(name), holder.ptr(), loc);
  }

  // Makes the graph a training graph: each update step runs `optimizer`'s step() and
  // clears the gradients inside the traced program; `scheduler` (optional, over the same
  // optimizer) steps after each update, outside the program (a changed learning rate
  // records the step program again). Several optimizers may be added. Error after the
  // first call, for a null optimizer, or one already added.
  void add_optimizer(std::shared_ptr<optim::Optimizer> optimizer,
                     std::shared_ptr<optim::LRScheduler> scheduler = nullptr,
                     const SourceLoc& loc = SourceLoc::current());

  // What the graph prints to std::cerr while it builds (each recording of a program):
  // -1 nothing (the default); 0 the build and compile stages with their times; 1 also
  // the graph's and each module's inputs, parameters and outputs as its forward runs;
  // 2 also every op as it is created (name, operand and result types, device); 3 also
  // each op's source line in the user's code. Error outside -1..3.
  void debug(int v_level = 0, const SourceLoc& loc = SourceLoc::current());

  // The registered modules' state dicts under their names ("model.0.weight"): a graph has
  // no tensors of its own. Optimizer state is saved through the optimizers.
  OrderedDict<Tensor> state_dict() const;
  // Module::load_state_dict on the registered modules (keys "<name>.<key>"), in place, so
  // the traced programs see the loaded values. Allowed before and after the first call.
  IncompatibleKeys load_state_dict(const OrderedDict<Tensor>& state, bool strict = true,
                                   const SourceLoc& loc = SourceLoc::current());

  // OneFlow's repr: GRAPH, CONFIG, MODULE, PARAMETER and BUFFER lines; after the first
  // call also INPUT and OUTPUT lines with shapes for the graph and each module called.
  std::string str() const;

  // How many times build() was recorded, over all programs (one per phase, more when a
  // key changes: new input shapes, a module's mode). A scheduler's rate is state the
  // programs read, so it never adds a recording.
  size_t num_traces() const { return traces_; }
  // How many programs the backend made, over all programs: one per recording that runs
  // again, plus one per new input shape a dynamic recording serves (a short last batch
  // merges with the full batches' recording into one with a dynamic batch dim, and is
  // compiled for its size; jit::Traced::num_compiles).
  size_t num_compiles() const;

 protected:
  GraphBase(const std::type_info& type, const SourceLoc& loc);

  // The traced programs: evaluation, or for a training graph the calls that only
  // accumulate gradients and the call that also updates.
  enum class Phase { Eval, Accumulate, Step };
  using Program = std::function<std::vector<Tensor>(std::span<const Tensor> inputs)>;
  using ProgramFactory = std::function<Program(Phase)>;

  // Set by Graph<Derived> on the first call: build() with its tensor arguments as a span,
  // whether it returns one Tensor, and how to trace a phase.
  bool hasPrograms() const { return !programs_.empty(); }
  void setPrograms(size_t arity, bool singleOutput, Program build, const ProgramFactory& trace);
  // Runs one call: picks the phase and runs its program on `inputs`; Error if they are
  // not as many tensors as on the first call.
  std::vector<Tensor> call(std::vector<Tensor> inputs);
  // How `phase`'s traced program counts the programs it made (jit::Traced::num_compiles).
  void countCompiles(Phase phase, std::function<size_t()> count) {
    compileCounts_[phase] = std::move(count);
  }

  // The body of every traced program: build, then the phase's gradient work.
  std::vector<Tensor> runPhase(Phase phase, std::span<const Tensor> inputs);
  jit::TraceOptions traceOptions(Phase phase) const;
  const SourceLoc& loc() const { return loc_; }

  // Names the programs' state after the registered modules and the optimizers.
  template <class Traced>
  void nameState(Traced& traced) const {
    for (const auto& [name, module] : root_->named_children()) traced.name_module(name, module);
    for (size_t i = 0; i < optimizers_.size(); ++i)
      traced.name_optimizer("opt" + std::to_string(i), *optimizers_[i].optimizer);
  }

 private:
  struct OptimizerEntry {
    std::shared_ptr<optim::Optimizer> optimizer;
    std::shared_ptr<optim::LRScheduler> scheduler;
  };
  // The INPUT and OUTPUT lines of one graph or module call, captured on the first call.
  struct CallIo {
    std::vector<std::string> inputs, outputs;
  };
  struct Io {
    CallIo graph;
    std::unordered_map<const Module*, std::vector<CallIo>> modules;
  };
  class Reporter;  // observes one build: printing, debug output (GraphPrint.cpp)
  using Clock = std::chrono::steady_clock;

  static const char* phaseName(Phase phase);
  // "(GRAPH:TrainGraph_0:TrainGraph)", the head of the graph's lines.
  std::string shallowRepr() const;
  // Under debug(0): the time from the end of a build to the end of its call.
  void reportCompiled(Phase phase) const;

  void checkNewModule(const std::string& name, bool defined, const SourceLoc& loc) const;
  void checkNotBuilt(std::string_view what, const SourceLoc& loc) const;
  Phase nextPhase() const;
  void makeGradientAccumulators();
  // Each parameter the optimizers update, once, in the order they list them.
  std::vector<Tensor> optimizedParameters() const;
  void clearGradients();
  void finishTrainingStep(Phase phase);
  void averageGradientsOverRanks();
  void afterCall(Phase phase);
  std::vector<std::string> moduleLines(const std::string& qualifiedName,
                                       const Module& module) const;

  std::string className_;
  std::string name_;
  SourceLoc loc_;
  GraphConfig config_;
  std::shared_ptr<Module> root_;  // the registered modules are its children
  std::vector<OptimizerEntry> optimizers_;
  // With gradient accumulation: each optimized parameter and its persistent .grad,
  // accumulated in place (so the programs bind it by reference) and zeroed after a step.
  std::vector<std::pair<Tensor, Tensor>> accumulators_;
  // With data parallelism: the optimized parameters, in the buckets one all-reduce averages.
  std::vector<std::vector<Tensor>> gradientBuckets_;
  int debugLevel_ = -1;

  size_t arity_ = 0;
  bool singleOutput_ = true;
  Program build_;
  std::map<Phase, Program> programs_;
  int64_t calls_ = 0;
  bool built_ = false;
  bool recorded_ = false;  // the current call recorded a program (ran build)
  bool replicasEqual_ = false;  // data parallel: rank 0's state was broadcast
  size_t traces_ = 0;
  std::map<Phase, std::function<size_t()>> compileCounts_;
  Clock::time_point builtAt_;  // when the last build ended
  Io io_;
};

// The base users derive from, with themselves as `Derived`:
//
//   struct TrainGraph : nn::Graph<TrainGraph> {
//     TrainGraph(nn::Sequential model, std::shared_ptr<optim::SGD> opt) : model(model) {
//       register_module("model", model);
//       add_optimizer(opt);
//     }
//     Tensor build(Tensor x, Tensor y) {
//       Tensor loss = cross_entropy(model->forward(x), y);
//       loss.backward();
//       return loss;
//     }
//     nn::Sequential model;
//   };
//
// build takes Tensors and returns a Tensor, a tuple or pair of Tensors, a
// std::vector<Tensor> or nothing. Calling the graph traces build symbolically on the
// first call (and again for new input shapes, as jit::trace does) and runs the compiled
// program otherwise; the outputs carry no autograd history.
template <class Derived>
class Graph : public GraphBase {
 public:
  template <class... Args>
    requires(std::is_same_v<Args, Tensor> && ...) &&
            requires(Derived& graph, const Args&... args) { graph.build(args...); }
  auto operator()(const Args&... args) {
    using R = decltype(std::declval<Derived&>().build(args...));
    static_assert(std::is_void_v<R> || std::is_same_v<R, Tensor> ||
                      std::is_same_v<R, std::vector<Tensor>> || jit::detail::kIsTensorTuple<R>,
                  "nn::Graph: build must return void, a Tensor, a tuple of Tensors or a "
                  "std::vector<Tensor>");
    if (!hasPrograms())
      setPrograms(sizeof...(Args), std::is_same_v<R, Tensor>, buildBody<R, Args...>(),
                  [this](Phase phase) { return traceProgram<Args...>(phase); });
    std::vector<Tensor> outputs = call({args...});
    if constexpr (!std::is_void_v<R>) return jit::detail::unflatten<R>(std::move(outputs));
  }

 protected:
  // `loc` (the subclass's constructor) is where errors of the graph's calls point.
  explicit Graph(const SourceLoc& loc = SourceLoc::current()) : GraphBase(typeid(Derived), loc) {}

 private:
  Derived& derived() { return static_cast<Derived&>(*this); }

  template <class R, class... Args>
  Program buildBody() {
    return [this](std::span<const Tensor> in) -> std::vector<Tensor> {
      return [&]<size_t... I>(std::index_sequence<I...>) -> std::vector<Tensor> {
        if constexpr (std::is_void_v<R>) {
          derived().build(in[I]...);
          return {};
        } else {
          return jit::detail::flatten(derived().build(in[I]...));
        }
      }(std::index_sequence_for<Args...>{});
    };
  }

  // One jit::trace of runPhase(phase, ...) for this arity, with the graph's state named.
  template <class... Args>
  Program traceProgram(Phase phase) {
    auto traced = jit::trace(
        [this, phase](const Args&... xs) { return runPhase(phase, std::vector<Tensor>{xs...}); },
        traceOptions(phase), loc());
    nameState(traced);
    countCompiles(phase, [traced] { return traced.num_compiles(); });
    return [traced](std::span<const Tensor> in) {
      return [&]<size_t... I>(std::index_sequence<I...>) {
        return traced(Tensor(in[I])...);
      }(std::index_sequence_for<Args...>{});
    };
  }
};

std::ostream& operator<<(std::ostream& os, const GraphBase& graph);

}  // namespace kiln::nn

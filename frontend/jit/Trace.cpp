// The MLIR side of jit::trace: the per-key cache of recordings, retrace reasons and
// limits, and running a recording on later calls.
#include "kiln/jit/Trace.h"

#include <cstdlib>
#include <iostream>
#include <algorithm>
#include <map>
#include <set>
#include <mutex>
#include <optional>
#include <sstream>
#include <string_view>
#include <unordered_map>

#include "frontend/jit/Backend.h"
#include "frontend/jit/Check.h"
#include "kiln/core/Log.h"
#include "frontend/jit/Context.h"
#include "frontend/jit/Dump.h"
#include "frontend/jit/Generalize.h"
#include "bridge/OpBridge.h"
#include "frontend/jit/Recorder.h"
#include "kiln/core/Autograd.h"
#include "kiln/core/Ops.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/OperationSupport.h"
#include "passes/Passes.h"
#include "runtime/DynamicProgram.h"

namespace kiln::jit::detail {

namespace {

// Whether two keys agree; with `shapes` false, in everything but the sizes of the inputs'
// dims (their ranks must agree).
bool sameKey(const CallKey& a, const CallKey& b, bool shapes = true) {
  if (a.inputs.size() != b.inputs.size() || a.statics != b.statics || a.gradMode != b.gradMode ||
      a.requiresGrad != b.requiresGrad || a.modes != b.modes)
    return false;
  for (size_t i = 0; i < a.inputs.size(); ++i)
    if ((shapes ? a.inputs[i].shape != b.inputs[i].shape
                : a.inputs[i].shape.size() != b.inputs[i].shape.size()) ||
        a.inputs[i].dtype != b.inputs[i].dtype || a.inputs[i].device != b.inputs[i].device)
      return false;
  return true;
}

// "input 0 dim 0, input 1 dim 0"
std::string dimsText(const std::vector<std::vector<int>>& symbols) {
  std::string text;
  for (size_t i = 0; i < symbols.size(); ++i)
    for (size_t d = 0; d < symbols[i].size(); ++d)
      if (symbols[i][d] >= 0)
        text += (text.empty() ? "" : ", ") + ("input " + std::to_string(i) + " dim " + std::to_string(d));
  return text;
}

// The shapes of a call's tensor inputs.
std::vector<Shape> inputShapes(const CallKey& key) {
  std::vector<Shape> shapes;
  for (const TensorMeta& input : key.inputs) shapes.push_back(input.shape);
  return shapes;
}

// "[64, 784], [64]"
std::string dimsText(const std::vector<Shape>& shapes) {
  std::string text;
  for (const Shape& shape : shapes) text += (text.empty() ? "" : ", ") + kiln::detail::concat(shape);
  return text;
}

mlir::func::FuncOp funcOf(const Recording& rec) {
  return *const_cast<Recording&>(rec).module->getOps<mlir::func::FuncOp>().begin();
}

std::vector<Shape> argumentShapes(mlir::func::FuncOp func) {
  std::vector<Shape> shapes;
  for (mlir::Type type : func.getArgumentTypes()) shapes.push_back(bridge::metaFor(type).shape);
  return shapes;
}

// What differs between the key of an earlier trace and a new one, for KILN_LOG=retrace
// and the max_retraces error: "input 0 shape [64, 784] → [32, 784]".
std::string keyChange(const CallKey& before, const CallKey& now) {
  std::ostringstream out;
  auto sep = [&] { return out.tellp() > 0 ? "; " : ""; };
  if (before.inputs.size() != now.inputs.size())
    out << sep() << "number of tensor inputs " << before.inputs.size() << " → " << now.inputs.size();
  for (size_t i = 0; i < std::min(before.inputs.size(), now.inputs.size()); ++i) {
    const TensorMeta &a = before.inputs[i], &b = now.inputs[i];
    if (a.shape != b.shape) out << sep() << "input " << i << " shape " << a.shape << " → " << b.shape;
    if (a.dtype != b.dtype) out << sep() << "input " << i << " dtype " << a.dtype << " → " << b.dtype;
    if (a.device != b.device)
      out << sep() << "input " << i << " device " << a.device << " → " << b.device;
    if (before.requiresGrad[i] != now.requiresGrad[i])
      out << sep() << "input " << i << " requires_grad " << (before.requiresGrad[i] ? "true" : "false")
          << " → " << (now.requiresGrad[i] ? "true" : "false");
  }
  if (before.statics != now.statics)
    out << sep() << "static arguments (" << before.statics << ") → (" << now.statics << ")";
  if (before.modes != now.modes)
    out << sep() << "module modes (" << before.modes << ") → (" << now.modes << ")";
  if (before.gradMode != now.gradMode)
    out << sep() << "grad mode " << (before.gradMode ? "on" : "off") << " → "
        << (now.gradMode ? "on" : "off");
  return out.str();
}

// The recorder of the trace running on this thread, for exclude_from_trace.
thread_local Recorder* tActiveRecorder = nullptr;

class ActiveRecorder {
 public:
  explicit ActiveRecorder(Recorder* recorder) : previous_(tActiveRecorder) { tActiveRecorder = recorder; }
  ~ActiveRecorder() { tActiveRecorder = previous_; }

 private:
  Recorder* previous_;
};

std::vector<Tensor> detached(std::vector<Tensor> tensors) {
  for (Tensor& t : tensors)
    if (t.defined()) t = t.detach();  // finish() reports an undefined output
  return tensors;
}

}  // namespace

struct TracedCore::Impl {
  struct Entry {
    CallKey key;
    Recording recording;
    // What runs it: the reference interpreter until compile() (a warm-up never compiles).
    std::shared_ptr<const runtime::Program> program;
    // A dynamic recording (made by makeDynamic): per input, per dim, the symbol of a `?`
    // dim or -1. Empty for a static one.
    std::vector<std::vector<int>> symbols;
    // The input shapes a dynamic recording has been checked to serve.
    std::set<std::vector<Shape>> verified;
    // Whether compile() made `program` (rather than the interpreter a recording starts with).
    bool compiled = false;
  };

  // Whether `entry` serves `key`: the same key, but that a dynamic entry's `?` dims take
  // any size of at least 1, equal where two dims share a symbol. (Size 1 is never learnt
  // from, but is served once the check at its first call passes; size 0 never is.)
  static bool matches(const Entry& entry, const CallKey& key) {
    if (entry.symbols.empty()) return sameKey(entry.key, key);
    if (!sameKey(entry.key, key, /*shapes=*/false)) return false;
    std::map<int, int64_t> sizes;
    for (size_t i = 0; i < key.inputs.size(); ++i)
      for (size_t d = 0; d < key.inputs[i].shape.size(); ++d) {
        const int symbol = entry.symbols[i][d];
        const int64_t size = key.inputs[i].shape[d];
        if (symbol < 0 ? size != entry.key.inputs[i].shape[d]
                       : size < 1 || sizes.emplace(symbol, size).first->second != size)
          return false;
      }
    return true;
  }

  // The input dims TraceOptions::dynamic_dims names for a call of `key`'s ranks (empty
  // when there are none).
  std::vector<std::vector<bool>> namedDims(const CallKey& key) const {
    if (options.dynamic_dims.empty()) return {};
    std::vector<std::vector<bool>> named;
    for (const TensorMeta& input : key.inputs) named.emplace_back(input.shape.size(), false);
    for (const DynamicDim& dim : options.dynamic_dims)
      for (size_t i = 0; i < named.size(); ++i)
        if ((dim.input < 0 || size_t(dim.input) == i) && dim.dim >= 0 &&
            size_t(dim.dim) < named[i].size())
          named[i][size_t(dim.dim)] = true;
    return named;
  }

  // The rest of a call that recorded `recorded`: a warm-up runs once and is dropped;
  // anything else is compiled, merged with an earlier recording into a dynamic one where
  // it can be, and run (unless the recording already ran it by value). Holds the mutex.
  std::vector<Tensor> finishRecording(Entry* recorded, std::optional<std::vector<Tensor>> eagerOutputs,
                                      CallKey key, std::span<const Tensor> inputs, const Body& body) {
    if (!recorded->recording.created.empty()) {
      // A warm-up: what it created is state from now on, so the next call retraces.
      std::vector<Tensor> outputs = eagerOutputs ? std::move(*eagerOutputs) : run(*recorded, inputs);
      warmUp(std::move(key));
      return detached(std::move(outputs));
    }
    warmUpKey.reset();
    if (eagerOutputs) keepBoundGrads(recorded->recording);  // before a merge drops it
    // A recording that merges into a dynamic one is not compiled for its own shapes: the
    // dynamic program serves them (compiled once for all sizes where the backend can).
    Entry* serving = recorded;
    if (!makeDynamic(*recorded)) {
      serving = probeDynamic(*recorded, body);
      if (!serving) {
        compile(*recorded);
        serving = recorded;
      }
    }
    if (eagerOutputs) return std::move(*eagerOutputs);  // recorded by value: already ran
    return run(*serving, inputs);
  }

  // The first recording of a function with dims named dynamic (TraceOptions::dynamic_dims)
  // is generalized at once, as MegEngine's symbolic_shape is: the function is recorded again
  // symbolically (placeholders, nothing runs) with each named dim of size >= 2 one larger,
  // and the two recordings merge, so the first compile is already the program for every
  // size. Returns the merged entry (`entry` is gone then), or null where the probe does not
  // record (the function needs values) or does not merge.
  Entry* probeDynamic(Entry& entry, const Body& body) {
    const std::vector<std::vector<bool>> named = namedDims(entry.key);
    if (named.empty() || !entry.recording.created.empty()) return nullptr;
    CallKey key = entry.key;
    std::vector<Tensor> probes;
    bool any = false;
    for (size_t i = 0; i < key.inputs.size(); ++i) {
      TensorMeta& input = key.inputs[i];
      for (size_t d = 0; d < input.shape.size(); ++d)
        if (named[i][d] && input.shape[d] >= 2) {
          ++input.shape[d];
          any = true;
        }
      probes.push_back(kiln::detail::emptyTensor(input.shape, input.dtype, input.device,
                                           /*placeholder=*/true, loc));
      if (key.requiresGrad[i]) probes.back().requires_grad_(true);
    }
    if (!any) return nullptr;
    std::optional<std::vector<Tensor>> unused;
    std::optional<Recording> recording;
    try {
      recording = recordOnce(probes, body, {true, options.capture_as_const, options.name}, unused);
    } catch (const NeedsValues&) {
      return nullptr;
    } catch (const Error& error) {  // what a placeholder cannot do: no probe, a static trace
      if (logEnabled("retrace"))
        std::cerr << "kiln: '" << options.name << "' records no probe at other sizes: " << error.what() << "\n";
      return nullptr;
    }
    Entry* probe = addEntry(std::move(key), std::move(*recording));
    if (makeDynamic(*probe)) return probe;
    entries.pop_back();
    return nullptr;
  }

  // After `entry` was recorded: if an earlier static recording differs from it only in
  // input sizes, the two become one dynamic entry (generalize), which keeps the earlier
  // one's compiled program for its shapes and replaces it; returns whether they merged
  // (and `entry` was compiled as the dynamic program).
  bool makeDynamic(Entry& entry) {
    const std::vector<std::vector<bool>> named = namedDims(entry.key);
    if (!options.automatic_dynamic && named.empty()) return false;
    // The static recordings of this function that differ from `entry` only in sizes.
    auto mergeable = [&](const Entry& other) {
      return &other != &entry && other.symbols.empty() &&
             sameKey(other.key, entry.key, /*shapes=*/false) &&
             other.recording.state.size() == entry.recording.state.size() &&
             std::equal(other.recording.state.begin(), other.recording.state.end(),
                        entry.recording.state.begin(),
                        [](const Tensor& x, const Tensor& y) { return x.impl() == y.impl(); });
    };
    // The most recent one it merges with.
    std::shared_ptr<Entry> before;
    Generalized merged;
    std::string why;
    for (auto it = entries.rbegin(); it != entries.rend() && !before; ++it) {
      if (!mergeable(**it)) continue;
      merged = generalize(funcOf((*it)->recording), funcOf(entry.recording), entry.key.inputs.size(),
                          options.automatic_dynamic ? std::vector<std::vector<bool>>{} : named);
      if (merged.module) before = *it;
      else if (why.empty()) why = merged.why;
    }
    if (!before) {
      if (!why.empty() && (!named.empty() || logEnabled("retrace")))
        std::cerr << "kiln: '" << options.name << "' stays static for these shapes: " << why << "\n";
      return false;
    }
    entry.recording.module = std::move(merged.module);  // the recording just made: never run
    entry.symbols = std::move(merged.symbols);
    compile(entry);
    auto dynamic = std::dynamic_pointer_cast<const runtime::DynamicProgram>(entry.program);
    // Its program serves the recordings' shapes: the one just made (never compiled: the
    // dynamic program serves its shapes instead) and any other static recording it turns
    // out to be (a size 1 recorded before the merge), whose compiled programs it keeps.
    entry.verified.insert(inputShapes(entry.key));
    std::set<const Entry*> absorbed;
    auto absorb = [&](const std::shared_ptr<Entry>& other) {
      absorbed.insert(other.get());
      entry.verified.insert(inputShapes(other->key));
      if (!dynamic || !other->compiled) return;
      // The specialization keeps the whole entry alive rather than taking its module: the
      // program refers to that module, and another thread's call may still be running it.
      dynamic->addSpecialization(argumentShapes(funcOf(other->recording)), nullptr,
                                 other->program, other);
    };
    absorb(before);
    for (auto& other : entries)
      if (!absorbed.count(other.get()) && mergeable(*other) &&
          specializationDifference(funcOf(entry.recording), funcOf(other->recording)).empty())
        absorb(other);
    if (logEnabled("retrace"))
      std::cerr << "kiln: '" << options.name << "' is dynamic in " << dimsText(entry.symbols)
                << " from now on: " << absorbed.size() + 1
                << " recordings at different sizes were merged into one program that serves "
                   "every size\n";
    std::erase_if(entries, [&](const auto& other) { return absorbed.count(other.get()) > 0; });
    return true;
  }

  Impl(TraceOptions options, SourceLoc loc)
      : options(std::move(options)),
        loc(loc),
        backend(selectedBackend(this->options.compile, "trace", loc)),
        check(checkEnabled(this->options.check, "trace", loc)) {}

  // Compiles a recording that will run again (not a warm-up) for the selected backend.
  void compile(Entry& entry) {
    const Recording& rec = entry.recording;
    mlir::ModuleOp module = rec.module.get();
    auto func = *module.getOps<mlir::func::FuncOp>().begin();
    entry.program = compileFor(backend, func, rec.callbacks.get(), "trace",
                               "trace '" + options.name + "'", loc, options.compile,
                               entry.recording.device);
    entry.compiled = true;
    if (entry.symbols.empty()) ++staticCompiles;  // a dynamic one counts its own
  }

  std::shared_ptr<Entry> find(const CallKey& key) {
    // A recording of exactly these shapes first (one that a dynamic recording's check
    // found to differ from it), then dynamic ones.
    for (bool dynamic : {false, true})
      for (auto& entry : entries)
        if (entry->symbols.empty() != dynamic && matches(*entry, key) &&
            gradChange(entry->recording).empty())
          return entry;
    return nullptr;
  }

  // Which state's .grad exists now and did not when `rec` was recorded, or the other way
  // round ("" if none): the recording then computes another gradient than eager code
  // would (backward() adds to an existing .grad, and makes one where there is none).
  static std::string gradChange(const Recording& rec) {
    std::string change;
    for (size_t k = 0; k < rec.state.size() && k < rec.gradAtStart.size(); ++k) {
      if (rec.gradCleared[k]) continue;  // the function clears it first (zero_grad)
      const bool now = rec.state[k].impl()->grad.defined();
      if (now != rec.gradAtStart[k].defined())
        change += (change.empty() ? "" : "; ") + std::string("the .grad of '") +
                  rec.stateNames[k] + (now ? "' now exists" : "' is gone");
    }
    return change;
  }

  // Records `body` for `key`; returns the entry and, for a by-value trace, the outputs
  // of the eager run that recorded it.
  std::pair<Entry*, std::optional<std::vector<Tensor>>> record(std::span<const Tensor> inputs,
                                                               CallKey key, const Body& body) {
    std::optional<Recording> recording;
    std::optional<std::vector<Tensor>> eager;
    if (options.symbolic) {
      try {
        recording = recordOnce(inputs, body, {true, options.capture_as_const, options.name}, eager);
      } catch (const NeedsValues&) {  // exclude_from_trace needs values: record by value
        recording = recordOnce(inputs, body,
                               {false, options.capture_as_const, options.name, true}, eager);
      }
    } else {
      recording = recordOnce(inputs, body, {false, options.capture_as_const, options.name}, eager);
    }
    return {addEntry(std::move(key), std::move(*recording)), std::move(eager)};
  }

  // `recording` of a call of `key` as the newest entry, run by the interpreter until
  // compiled.
  Entry* addEntry(CallKey key, Recording recording) {
    mlir::ModuleOp module = recording.module.get();
    auto func = *module.getOps<mlir::func::FuncOp>().begin();
    auto program = compileFor(runtime::referenceInterpreter(), func, recording.callbacks.get(),
                              "trace", "trace '" + options.name + "'", loc, {}, Device{});
    entries.push_back(std::make_shared<Entry>(Entry{std::move(key), std::move(recording), std::move(program)}));
    return entries.back().get();
  }

  // One recording; `eager` gets the outputs when it ran by value.
  Recording recordOnce(std::span<const Tensor> inputs, const Body& body, RecorderOptions how,
                       std::optional<std::vector<Tensor>>& eager) {
    Recorder recorder(context(), how);
    nameState(recorder);
    std::vector<Tensor> traceInputs;
    for (const Tensor& input : inputs) {
      // By value, each input gets its own handle on the caller's tensor: the same tensor
      // passed twice, or also read as state, must still record as separate values.
      Tensor x = how.symbolic ? kiln::detail::emptyTensor(input.sizes(), input.dtype(), input.device(),
                                                          /*placeholder=*/true, loc)
                              : Tensor(std::make_shared<TensorImpl>(*input.impl()));
      if (how.symbolic && input.requires_grad()) x.requires_grad_(true, loc);
      recorder.addInput(x);
      traceInputs.push_back(x);
    }
    std::vector<Tensor> outputs;
    {
      DispatchHookGuard guard(&recorder);
      ActiveRecorder active(&recorder);
      outputs = body(traceInputs);
    }
    if (!how.symbolic) eager = detached(outputs);
    Recording recording = recorder.finish(std::move(outputs), loc);
    // Non-blocking collectives start as soon as their operands exist, for every backend.
    recording.module->walk([](mlir::func::FuncOp func) { mlir::kiln::scheduleCollectives(func); });
    recording.byValue = !how.symbolic;
    return recording;
  }

  // Runs the namers; the first name a tensor gets wins.
  void nameState(Recorder& recorder) {
    struct Sink final : NameSink {
      std::unordered_map<const TensorImpl*, std::string> names;
      void name(const Tensor& tensor, std::string name) override {
        if (tensor.defined()) names.emplace(tensor.impl(), std::move(name));
      }
      std::string nameOf(const Tensor& tensor) const override {
        auto it = names.find(tensor.impl());
        return it == names.end() ? "" : it->second;
      }
    } sink;
    for (const Namer& namer : namers) namer(sink);
    for (const auto& [impl, name] : sink.names) recorder.nameState(impl, name);
  }

  std::vector<Tensor> run(const Entry& entry, std::span<const Tensor> inputs) {
    const Recording& rec = entry.recording;
    mlir::ModuleOp module = rec.module.get();
    auto func = *module.getOps<mlir::func::FuncOp>().begin();
    std::vector<Tensor> arguments(inputs.begin(), inputs.end());
    auto argTypes = func.getArgumentTypes();
    for (size_t k = 0; k < rec.state.size(); ++k) {
      const Tensor& s = rec.state[k];
      TensorMeta recorded = bridge::metaFor(argTypes[inputs.size() + k]);
      if (s.sizes() != recorded.shape || s.dtype() != recorded.dtype)
        throw TraceError::make(loc, "trace", "state '", rec.stateNames[k], "' was ",
                               recorded.dtype, " of shape ", recorded.shape,
                               " when traced and is now ", s.dtype(), " of shape ", s.sizes(),
                               "; a trace binds state by reference and cannot follow a "
                               "replacement of another shape");
      arguments.push_back(s);
    }
    auto runProgram = [&](std::span<const Tensor> args) {
      return entry.program->run(args, loc, recyclableGrads(rec));
    };
    std::vector<Tensor> results = check && entry.program->compiled()
                                      ? runChecked(checked(rec, func), arguments, runProgram, loc)
                                      : runProgram(arguments);
    writeBack(rec, arguments, results);
    results.resize(rec.numOutputs);
    return results;
  }

  // `func` of `rec` as check mode runs it: its probe compiles as the trace does.
  CheckedProgram checked(const Recording& rec, mlir::func::FuncOp func) const {
    const runtime::CallbackTable* callbacks = rec.callbacks.get();
    return {func, callbacks, "trace '" + options.name + "'", options.check,
            [this, callbacks](mlir::func::FuncOp probe) {
              return compileFor(backend, probe, callbacks, "check",
                                "the check probe of trace '" + options.name + "'", loc,
                                options.compile, Device{});
            }};
  }

  // Per result of `rec`, the memory a compiled run may write it into: for a result that
  // becomes state k's new .grad, the old .grad when nothing but state k holds it (eager
  // code would free it at zero_grad() and allocate the new one). Writing there keeps the
  // step's peak memory at one set of gradients and saves the fresh pages.
  static std::vector<Tensor> recyclableGrads(const Recording& rec) {
    std::vector<Tensor> reuse(rec.numOutputs + rec.updatedState.size() + rec.gradOf.size());
    size_t at = rec.numOutputs + rec.updatedState.size();
    for (size_t k : rec.gradOf) {
      const std::shared_ptr<TensorImpl>& grad = rec.state[k].impl()->grad.implPtr();
      if (grad && grad.use_count() == 1 && grad->storage && grad->storage.use_count() == 1)
        reuse[at] = Tensor(grad);
      ++at;
    }
    return reuse;
  }

  // Applies what a run wrote besides its outputs: state updates in place, fresh .grad
  // tensors, cleared .grad, and (for a symbolic warm-up) the created tensors' values.
  void writeBack(const Recording& rec, std::span<const Tensor> arguments,
                 std::span<const Tensor> results) {
    NoGradGuard noGrad;
    DispatchHookGuard noHook(nullptr);
    size_t at = rec.numOutputs;
    for (size_t k : rec.updatedState) {
      Tensor target = rec.state[k];  // a handle: the write lands in the bound tensor
      const Tensor& update = results[at++];
      if (update.impl() == target.impl()) continue;  // compiled code wrote it in place
      target.copy_(update, loc);
    }
    // A result may share memory with an argument (a view) or another result: those are
    // copied, so no .grad or created tensor aliases anything else.
    std::vector<const Storage*> taken;
    for (const Tensor& a : arguments) taken.push_back(a.impl()->storage.get());
    auto owned = [&](const Tensor& t) {
      const Storage* storage = t.impl()->storage.get();
      bool shared = std::find(taken.begin(), taken.end(), storage) != taken.end();
      Tensor out = shared ? t.clone(loc) : t;
      taken.push_back(out.impl()->storage.get());
      return out;
    };
    for (size_t k : rec.gradOf) {
      const Tensor& update = results[at++];
      if (!keepInBoundGrad(rec, k, update)) rec.state[k].impl()->grad = owned(update);
    }
    for (size_t k : rec.clearedGrads) rec.state[k].impl()->grad = Tensor();
    for (const Tensor& created : rec.created) {
      Tensor value = owned(results[at++]);
      if (rec.byValue) continue;  // the eager run that recorded it computed it
      if (!created.is_placeholder()) {  // made by a factory, then written symbolically
        Tensor target = created;
        target.copy_(value, loc);
        continue;
      }
      TensorImpl& target = *created.impl();
      target.storage = value.impl()->storage;
      target.strides = value.strides();
      target.offset = value.storage_offset();
    }
  }

  // A .grad the recording reads (accumulating into it) is state bound by reference: a new
  // gradient of state k goes into that tensor, which stays the .grad, so the recorded
  // program reads it there next call. False when state k's .grad is not bound that way.
  static bool keepInBoundGrad(const Recording& rec, size_t k, const Tensor& update) {
    if (k >= rec.state.size()) return false;  // capture_as_const: nothing is bound
    const Tensor& bound = rec.gradAtStart[k];
    if (!bound.defined() || bound.impl() == update.impl() || !isState(rec, bound.impl()))
      return false;
    Tensor(bound).copy_(update);
    rec.state[k].impl()->grad = bound;
    return true;
  }

  // After a recording that ran eagerly, backward() has replaced a bound .grad with a fresh
  // tensor: its values go back into the bound one.
  static void keepBoundGrads(const Recording& rec) {
    NoGradGuard noGrad;
    DispatchHookGuard noHook(nullptr);
    for (size_t k : rec.gradOf)
      if (k < rec.state.size())
        if (const Tensor& slot = rec.state[k].impl()->grad; slot.defined())
          keepInBoundGrad(rec, k, slot);
  }

  static bool isState(const Recording& rec, const TensorImpl* impl) {
    return std::any_of(rec.state.begin(), rec.state.end(),
                       [&](const Tensor& t) { return t.impl() == impl; });
  }

  mlir::MLIRContext& context() {
    if (!mlirContext) mlirContext = makeContext();
    return *mlirContext;
  }

  // Drops the warm-up recording just made (the last entry). A second warm-up in a row for
  // the same key means the function creates lasting tensors on every call.
  void warmUp(CallKey key) {
    std::shared_ptr<Entry> dropped = std::move(entries.back());
    entries.pop_back();
    const Recording& rec = dropped->recording;
    if (warmUpKey && sameKey(*warmUpKey, key)) {
      std::ostringstream shapes;
      for (const Tensor& t : rec.created) shapes << (shapes.tellp() > 0 ? ", " : "") << t.sizes();
      warmUpKey.reset();
      throw TraceError::make(loc, "trace", "'", options.name, "' creates ", rec.created.size(),
                             " tensor(s) on every call that outlive the call and are not "
                             "outputs (shapes ", shapes.str(),
                             "); a trace cannot bind new tensors each call. Create them once "
                             "before tracing, or return them");
    }
    warmUpKey = std::move(key);
  }

  TraceOptions options;
  SourceLoc loc;
  runtime::BackendSelection backend;
  bool check;  // TraceOptions::check or KILN_CHECK: compiled calls run beside the interpreter
  std::optional<CallKey> warmUpKey;  // the key of the last call, if it was a warm-up
  std::unique_ptr<mlir::MLIRContext> mlirContext;
  // Shared: a call runs its entry after releasing the mutex, while another thread's call
  // may merge that entry into a dynamic one and drop it from here.
  std::vector<std::shared_ptr<Entry>> entries;
  std::vector<Namer> namers;
  std::vector<std::pair<std::string, std::function<std::string()>>> modeProbes;
  std::vector<std::string> history;  // why each retrace happened
  size_t staticCompiles = 0;         // programs compile() made for static recordings
  std::mutex mutex;                  // guards entries and history; held while recording
};

TracedCore::TracedCore(TraceOptions options, SourceLoc loc)
    : impl_(std::make_unique<Impl>(std::move(options), loc)) {}

TracedCore::~TracedCore() = default;

void TracedCore::addNamer(Namer namer) {
  std::lock_guard lock(impl_->mutex);
  impl_->namers.push_back(std::move(namer));
}

void TracedCore::addModeProbe(std::string name, std::function<std::string()> probe) {
  std::lock_guard lock(impl_->mutex);
  impl_->modeProbes.emplace_back(std::move(name), std::move(probe));
}

std::vector<Tensor> TracedCore::call(std::span<const Tensor> inputs, CallKey key, const Body& body) {
  key.inputs.reserve(inputs.size());
  key.requiresGrad.reserve(inputs.size());
  for (const Tensor& input : inputs) {
    key.inputs.push_back({input.sizes(), input.dtype(), input.device()});
    key.requiresGrad.push_back(input.requires_grad());
  }
  key.gradMode = isGradEnabled();
  Impl& impl = *impl_;
  std::shared_ptr<Impl::Entry> entry;
  {
    std::lock_guard lock(impl.mutex);
    for (const auto& [name, probe] : impl.modeProbes) key.modes += name + "=" + probe() + ";";
    entry = impl.find(key);
    // A dynamic entry serves a new size only after the function, recorded at that size,
    // turns out to be the dynamic program specialized to it: C++ code that branches on a
    // size cannot be seen otherwise. By value, the recording is this call's eager run.
    const std::vector<Shape> shapes =
        entry && !entry->symbols.empty() ? inputShapes(key) : std::vector<Shape>{};
    if (entry && !entry->symbols.empty() && !entry->verified.count(shapes)) {
      auto [recorded, eagerOutputs] = impl.record(inputs, key, body);
      std::string difference =
          recorded->recording.created.empty()
              ? specializationDifference(funcOf(entry->recording), funcOf(recorded->recording))
              : "it creates tensors that outlive the call";
      if (difference.empty()) {
        entry->verified.insert(shapes);
        if (eagerOutputs) Impl::keepBoundGrads(recorded->recording);
        impl.entries.pop_back();  // the recording just made
        if (eagerOutputs) return std::move(*eagerOutputs);
        return impl.run(*entry, inputs);
      }
      impl.history.push_back("the function records other ops at input shapes " + dimsText(shapes));
      if (logEnabled("retrace") || !impl.options.dynamic_dims.empty())
        std::cerr << "kiln: '" << impl.options.name << "' records other ops at input shapes "
                  << dimsText(shapes) << " than its dynamic program specialized to them ("
                  << difference << "); that recording serves these shapes\n";
      entry = nullptr;
      return impl.finishRecording(recorded, std::move(eagerOutputs), std::move(key), inputs, body);
    }
    if (!entry) {
      if (impl.warmUpKey && sameKey(*impl.warmUpKey, key)) {
        if (logEnabled("retrace"))
          std::cerr << "kiln: retrace '" << impl.options.name
                    << "' after a warm-up: the previous call created tensors that outlive it "
                       "(such as optimizer state)\n";
      } else if (!impl.entries.empty()) {
        std::string change = keyChange(impl.entries.back()->key, key);
        if (change.empty()) change = Impl::gradChange(impl.entries.back()->recording);
        if (int(impl.entries.size()) > impl.options.max_retraces) {
          if (impl.options.fallback_to_eager) return detached(body(inputs));
          std::ostringstream history;
          for (size_t i = 0; i < impl.history.size(); ++i) history << "\n  retrace " << i + 1 << ": " << impl.history[i];
          throw TraceError::make(impl.loc, "trace", "'", impl.options.name, "' would retrace a ",
                                 impl.entries.size(), "th time (max_retraces = ",
                                 impl.options.max_retraces, ") because ", change,
                                 "; earlier retraces:", history.str(),
                                 "\nKeep input shapes and static arguments fixed, raise "
                                 "max_retraces, or set fallback_to_eager");
        }
        impl.history.push_back(change);
        if (logEnabled("retrace"))
          std::cerr << "kiln: retrace '" << impl.options.name << "' (" << impl.entries.size() + 1
                    << " traces): " << change << "\n";
      }
      auto [recorded, eagerOutputs] = impl.record(inputs, key, body);
      return impl.finishRecording(recorded, std::move(eagerOutputs), std::move(key), inputs, body);
    }
  }
  return impl.run(*entry, inputs);
}

std::string TracedCore::graphStr(bool locations) const {
  std::lock_guard lock(impl_->mutex);
  std::string text;
  llvm::raw_string_ostream out(text);
  mlir::OpPrintingFlags flags;
  if (locations) flags.enableDebugInfo(/*enable=*/true, /*prettyForm=*/true);
  for (const auto& entry : impl_->entries) entry->recording.module->print(out, flags);
  return text;
}

std::vector<Tensor> runExcluded(HostBody body, std::vector<Tensor> inputs, const SourceLoc& loc) {
  Recorder* recorder = tActiveRecorder;
  // Only while that recorder is the hook: a body that itself calls a traced function
  // runs eagerly there.
  if (!recorder || currentDispatchHook() != recorder) return body(inputs);
  return recorder->recordCallback(body, inputs, loc);
}

void TracedCore::dump(const std::string& path, const DumpOptions& options,
                      const SourceLoc& loc) const {
  std::lock_guard lock(impl_->mutex);
  const TraceOptions& traced = impl_->options;
  if (!traced.capture_as_const)
    throw TraceError::make(loc, "dump", "'", traced.name,
                           "' was traced without capture_as_const, so its state (parameters, "
                           "buffers) is bound by reference and cannot be written out; trace it "
                           "with {.capture_as_const = true} to dump it");
  if (impl_->entries.size() != 1)
    throw TraceError::make(loc, "dump", "'", traced.name, "' has ", impl_->entries.size(),
                           " recordings; dump needs exactly one (call it once, with the "
                           "input shapes to dump, before dump)");
  dumpModule(impl_->entries.front()->recording.module.get(), path, options, loc);
}

size_t TracedCore::numCompiles() const {
  std::lock_guard lock(impl_->mutex);
  size_t compiles = impl_->staticCompiles;
  for (const auto& entry : impl_->entries)
    if (auto dynamic = std::dynamic_pointer_cast<const runtime::DynamicProgram>(entry->program))
      compiles += dynamic->numCompiled();
  return compiles;
}

size_t TracedCore::numTraces() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->entries.size();
}

}  // namespace kiln::jit::detail

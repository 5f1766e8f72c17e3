// nn::Graph's core: registration, one traced program per phase, gradient accumulation
// and state dicts. Printing and debug output are in GraphPrint.cpp.
#include "kiln/nn/Graph.h"

#include <mutex>
#include <unordered_map>
#include <unordered_set>

#include "frontend/nn/GraphReporter.h"
#include "kiln/core/Autograd.h"
#include "kiln/core/Collective.h"
#include "kiln/core/Dispatcher.h"
#include "kiln/core/Error.h"
#include "kiln/core/Ops.h"
#include "kiln/nn/GradientBuckets.h"

namespace kiln::nn {

// ---- GraphConfig -----------------------------------------------------------------------

GraphConfig& GraphConfig::set_gradient_accumulation_steps(int64_t n, const SourceLoc& loc) {
  checkMutable("set_gradient_accumulation_steps", loc);
  if (n < 1)
    throw Error::make(loc, "set_gradient_accumulation_steps",
                      "the number of steps must be at least 1, got ", n);
  accumulationSteps_ = n;
  return *this;
}

GraphConfig& GraphConfig::allow_fuse_add_to_output(bool on, const SourceLoc& loc) {
  checkMutable("allow_fuse_add_to_output", loc);
  fuseAddToOutput_ = on;
  return *this;
}

GraphConfig& GraphConfig::enable_fusion(bool on, const SourceLoc& loc) {
  checkMutable("enable_fusion", loc);
  fusion_ = on;
  return *this;
}

GraphConfig& GraphConfig::enable_dynamic_batch(bool on, const SourceLoc& loc) {
  checkMutable("enable_dynamic_batch", loc);
  dynamicBatch_ = on;
  return *this;
}

GraphConfig& GraphConfig::set_backend(std::string name, const SourceLoc& loc) {
  checkMutable("set_backend", loc);
  backend_ = std::move(name);
  return *this;
}

GraphConfig& GraphConfig::enable_data_parallel(bool on, double bucket_cap_mb, const SourceLoc& loc) {
  checkMutable("enable_data_parallel", loc);
  if (!(bucket_cap_mb > 0))
    throw Error::make(loc, "enable_data_parallel", "bucket_cap_mb must be positive, got ",
                      bucket_cap_mb);
  dataParallel_ = on;
  bucketCapMb_ = bucket_cap_mb;
  return *this;
}

void GraphConfig::checkMutable(std::string_view what, const SourceLoc& loc) const {
  if (!fixedBy_.empty())
    throw Error::make(loc, what, "the config of ", fixedBy_, " was fixed by its first call, "
                      "which traced its programs with it; set it before calling the graph");
}

// ---- GraphBase: construction and registration --------------------------------------------

namespace {

// "<class>_<k>": k counts the graphs of that class made in this process, as OneFlow's.
std::string instanceName(const std::string& className) {
  static std::mutex mutex;
  static std::unordered_map<std::string, int64_t> counts;
  std::lock_guard lock(mutex);
  return className + "_" + std::to_string(counts[className]++);
}

}  // namespace

GraphBase::GraphBase(const std::type_info& type, const SourceLoc& loc)
    : className_(detail::unqualifiedTypeName(type)),
      name_(instanceName(className_)),
      loc_(loc),
      root_(std::make_shared<Module>(className_)) {}

GraphBase::~GraphBase() = default;

const char* GraphBase::phaseName(Phase phase) {
  switch (phase) {
    case Phase::Eval: return "eval";
    case Phase::Accumulate: return "accumulate";
    case Phase::Step: return "step";
  }
  return "?";
}

void GraphBase::checkNotBuilt(std::string_view what, const SourceLoc& loc) const {
  if (hasPrograms())
    throw Error::make(loc, what, name_, " has been called already and its programs are traced "
                      "with the modules and optimizers it had then; ", what,
                      " before its first call");
}

void GraphBase::checkNewModule(const std::string& name, bool defined, const SourceLoc& loc) const {
  checkNotBuilt("register_module", loc);
  if (!defined)
    throw Error::make(loc, "register_module", "module '", name, "' of ", name_,
                      " is empty (a holder constructed from nullptr)");
  if (root_->named_children().contains(name))
    throw Error::make(loc, "register_module", name_, " already has a module named '", name, "'");
}

void GraphBase::add_optimizer(std::shared_ptr<optim::Optimizer> optimizer,
                              std::shared_ptr<optim::LRScheduler> scheduler, const SourceLoc& loc) {
  checkNotBuilt("add_optimizer", loc);
  if (!optimizer) throw Error::make(loc, "add_optimizer", "the optimizer is null");
  for (const OptimizerEntry& entry : optimizers_)
    if (entry.optimizer == optimizer)
      throw Error::make(loc, "add_optimizer", "this optimizer was added to ", name_,
                        " already; each optimizer steps once per update");
  optimizers_.push_back({std::move(optimizer), std::move(scheduler)});
  config_.training_ = true;
}

void GraphBase::debug(int v_level, const SourceLoc& loc) {
  if (v_level < -1 || v_level > 3)
    throw Error::make(loc, "debug", "v_level must be -1 (off) or 0 to 3, got ", v_level);
  debugLevel_ = v_level;
}

OrderedDict<Tensor> GraphBase::state_dict() const { return root_->state_dict(); }

IncompatibleKeys GraphBase::load_state_dict(const OrderedDict<Tensor>& state, bool strict,
                                            const SourceLoc& loc) {
  return root_->load_state_dict(state, strict, loc);
}

// ---- GraphBase: calls --------------------------------------------------------------------

void GraphBase::setPrograms(size_t arity, bool singleOutput, Program build,
                            const ProgramFactory& trace) {
  const int64_t steps = config_.accumulationSteps_;
  if (steps > 1 && !training())
    throw Error::make(loc_, name_, "gradient accumulation over ", steps, " calls needs a "
                      "training graph; add an optimizer with add_optimizer");
  if (config_.dataParallel_ && !training())
    throw Error::make(loc_, name_, "data-parallel training needs a training graph; add an "
                      "optimizer with add_optimizer");
  config_.fixedBy_ = name_;
  arity_ = arity;
  singleOutput_ = singleOutput;
  build_ = std::move(build);
  if (!training()) {
    programs_[Phase::Eval] = trace(Phase::Eval);
    return;
  }
  if (steps > 1) programs_[Phase::Accumulate] = trace(Phase::Accumulate);
  programs_[Phase::Step] = trace(Phase::Step);
  makeGradientAccumulators();
  if (config_.dataParallel_)
    gradientBuckets_ = detail::gradientBuckets(optimizedParameters(), config_.bucketCapMb_);
}

jit::TraceOptions GraphBase::traceOptions(Phase phase) const {
  jit::TraceOptions options{.symbolic = true, .name = name_ + "_" + phaseName(phase)};
  options.compile.fuse = config_.fusion_enabled();
  options.compile.backend = config_.backend();
  if (config_.dynamicBatch_) options.dynamic_dims = {{.input = -1, .dim = 0}};
  return options;
}

GraphBase::Phase GraphBase::nextPhase() const {
  if (!training()) return Phase::Eval;
  const int64_t steps = config_.accumulationSteps_;
  return calls_ % steps == steps - 1 ? Phase::Step : Phase::Accumulate;
}

std::vector<Tensor> GraphBase::call(std::vector<Tensor> inputs) {
  if (inputs.size() != arity_)
    throw Error::make(loc_, name_, "called with ", inputs.size(), " tensor(s), but build was "
                      "traced with ", arity_, " on the first call");
  if (config_.dataParallel_ && !replicasEqual_) {
    std::vector<Tensor> state = root_->parameters();
    for (const Tensor& b : root_->buffers()) state.push_back(b);
    kiln::detail::broadcastFromRank0(name_, state, loc_);
    replicasEqual_ = true;
  }
  const Phase phase = nextPhase();
  recorded_ = false;
  std::vector<Tensor> outputs = programs_.at(phase)(inputs);
  if (recorded_) {
    ++traces_;
    reportCompiled(phase);
  }
  afterCall(phase);
  return outputs;
}

size_t GraphBase::num_compiles() const {
  size_t compiles = 0;
  for (const auto& [phase, count] : compileCounts_) compiles += count();
  return compiles;
}

void GraphBase::afterCall(Phase phase) {
  if (phase == Phase::Step)
    for (const OptimizerEntry& entry : optimizers_)
      if (entry.scheduler) entry.scheduler->step();
  ++calls_;
  built_ = true;
}

std::vector<Tensor> GraphBase::runPhase(Phase phase, std::span<const Tensor> inputs) {
  Reporter reporter(*this, phase, inputs);
  recorded_ = true;
  if (phase != Phase::Eval) clearGradients();
  std::vector<Tensor> outputs = build_(inputs);
  if (phase != Phase::Eval) finishTrainingStep(phase);
  reporter.finish(outputs);
  return outputs;
}

// ---- GraphBase: gradients ----------------------------------------------------------------

// Gradient accumulation keeps each optimized parameter's .grad as one tensor for the
// graph's life, updated in place: a traced program binds state by reference, so an
// in-place update is what a later call sees, where a fresh .grad each call would leave
// the program reading the tensor it was traced with.
void GraphBase::makeGradientAccumulators() {
  if (config_.accumulationSteps_ == 1) return;
  NoGradGuard noGrad;
  for (const Tensor& param : optimizedParameters()) {
    Tensor accumulated = zeros_like(param, loc_);
    Tensor(param).set_grad(accumulated);
    accumulators_.emplace_back(param, accumulated);
  }
}

std::vector<Tensor> GraphBase::optimizedParameters() const {
  std::unordered_set<const TensorImpl*> seen;
  std::vector<Tensor> params;
  for (const OptimizerEntry& entry : optimizers_)
    for (const optim::OptimizerParamGroup& group : entry.optimizer->param_groups())
      for (const Tensor& param : group.params())
        if (seen.insert(param.impl()).second) params.push_back(param);
  return params;
}

// While a training program records, build's backward must find no gradient: one left
// from an earlier call would be read as state the program was traced with, not the
// gradient present when it runs again. Backward then leaves each call's own gradient.
// The recording is told of each cleared gradient (as Optimizer::zero_grad tells it), so
// that a gradient existing at a later call's start (an accumulator) is not taken for a
// change that needs a new recording: without it, every call of an accumulating graph
// recorded again.
void GraphBase::clearGradients() {
  auto clear = [](Tensor& param) {
    param.set_grad(Tensor());
    if (DispatchHook* hook = currentDispatchHook()) hook->onGradCleared(param);
  };
  for (Tensor& param : root_->parameters()) clear(param);
  for (const OptimizerEntry& entry : optimizers_)
    for (optim::OptimizerParamGroup& group : entry.optimizer->param_groups())
      for (Tensor& param : group.params()) clear(param);
}

// After build: adds this call's gradients, scaled by 1/n, into the accumulators; on an
// update call, steps the optimizers and clears the gradients, all inside the program.
void GraphBase::finishTrainingStep(Phase phase) {
  NoGradGuard noGrad;
  const double scale = 1.0 / double(config_.accumulationSteps_);
  for (auto& [param, accumulated] : accumulators_) {
    Tensor grad = param.grad();
    // Set first, so the tracer names the accumulator after its parameter (".grad").
    param.set_grad(accumulated);
    if (grad.defined()) accumulated.add_(grad, scale, loc_);
  }
  if (phase != Phase::Step) return;
  averageGradientsOverRanks();
  for (const OptimizerEntry& entry : optimizers_) entry.optimizer->step(nullptr, loc_);
  if (accumulators_.empty()) {
    for (const OptimizerEntry& entry : optimizers_) entry.optimizer->zero_grad(true, loc_);
    return;
  }
  for (auto& [param, accumulated] : accumulators_) accumulated.zero_(loc_);
}

// With data parallelism, each optimized parameter's gradient (the accumulated one, with
// accumulation) becomes its mean over the ranks: every bucket's all-reduce is started
// (kiln.all_reduce_start), then each is waited for (kiln.wait) and its values copied back,
// recorded into the step program, which runs them on every update.
void GraphBase::averageGradientsOverRanks() {
  std::vector<Tensor> started;
  for (const std::vector<Tensor>& bucket : gradientBuckets_)
    started.push_back(all_reduce_start_op(detail::flatGradients(bucket, loc_), "mean", loc_));
  for (size_t b = 0; b < started.size(); ++b)
    detail::setGradients(gradientBuckets_[b], wait_op(started[b], loc_), loc_);
}

}  // namespace kiln::nn

// GraphBase::Reporter: watches one build of an nn::Graph program, the module calls and,
// under debug(2), every op, to print the debug lines as they happen and to capture the
// INPUT/OUTPUT lines the graph prints after its first call.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "kiln/core/Dispatcher.h"
#include "kiln/nn/Graph.h"

namespace kiln::nn {

// Installed for the duration of one run of build inside a recording. As the dispatch hook
// (debug level 2 and up) it prints each op and passes everything on to the tracer's hook,
// which it wraps.
class GraphBase::Reporter final : public ForwardObserver, public DispatchHook {
 public:
  Reporter(GraphBase& graph, Phase phase, std::span<const Tensor> inputs);
  // build returned `outputs`: prints them and the build time; on the graph's first call
  // the captured lines become the graph's.
  void finish(std::span<const Tensor> outputs);

  void onForwardBegin(const Module& module, std::span<const Tensor> inputs) override;
  void onForwardEnd(const Module& module, std::span<const Tensor> outputs) override;

  bool symbolic() const override;
  void onOp(const OpCall& call) override;
  void onValueRead(const Tensor& tensor, std::string_view what, const SourceLoc& loc) override;
  void onAlias(const Tensor& source, const Tensor& alias) override;
  void onGradCleared(const Tensor& leaf) override;

 private:
  // A module call in progress; `name` is empty for a module outside the graph's modules.
  struct Frame {
    const Module* module;
    std::string name;
    size_t call;  // index into io_.modules[module]
  };

  void say(int level, const std::string& line) const;
  // The innermost graph module being called, or the graph: where an op is created.
  const std::string& scope() const;

  GraphBase& graph_;
  Phase phase_;
  Clock::time_point start_;
  DispatchHook* inner_;  // the tracer's hook
  std::unordered_map<const Module*, std::string> names_;  // qualified names, first wins
  std::vector<Frame> frames_;
  Io io_;
  std::optional<ForwardObserverGuard> observing_;
  std::optional<DispatchHookGuard> hooked_;
};

}  // namespace kiln::nn

// The collectives of the op table (kiln.all_reduce, kiln.all_reduce_start, kiln.wait).
// Their kernels copy the operand into the output and hand that buffer to the runner
// kiln::distributed installed, which reduces it over MPI (kiln/core/Collective.h).
#include <atomic>

#include "frontend/core/kernels/Copy.h"
#include "frontend/core/ops/OpTable.h"
#include "frontend/core/ops/ShapeRules.h"
#include "kiln/core/Collective.h"
#include "kiln/core/Dispatcher.h"

namespace kiln {
namespace {

std::atomic<const detail::CollectiveRunner*> gRunner{nullptr};

const detail::CollectiveRunner& runner(const OpArgs& args) {
  const detail::CollectiveRunner* installed = gRunner.load();
  if (!installed)
    throw Error::make(args.loc, "all_reduce", "a ", args.inputs[0].dtype(), " ",
                      args.inputs[0].sizes(), " tensor cannot be reduced over the ranks of an ",
                      "MPI job before kiln::distributed::init() (//frontend:distributed)");
  return *installed;
}

}  // namespace

namespace ops {
namespace {

std::vector<TensorMeta> allReduceShape(const OpDef& op, std::span<const TensorMeta> in,
                                       const Attrs& attrs, const SourceLoc& loc) {
  const std::string& kind = attrs.get<std::string>("kind");
  if (kind != "sum" && kind != "mean" && kind != "max")
    throw Error::make(loc, op.name, "kind must be sum, mean or max, got '", kind, "'");
  if (kind == "mean") requireDType(op, in[0], DTypeClass::Floating, loc);
  return {in[0]};
}

void allReduceKernel(const OpArgs& args, std::span<Tensor> out) {
  const detail::CollectiveRunner& run = runner(args);
  kernels::copyValues(out[0], args.inputs[0]);
  run.allReduce(out[0], args.attrs.get<std::string>("kind"), args.loc);
}

void allReduceStartKernel(const OpArgs& args, std::span<Tensor> out) {
  const detail::CollectiveRunner& run = runner(args);
  kernels::copyValues(out[0], args.inputs[0]);
  run.start(out[0], args.attrs.get<std::string>("kind"), args.loc);
}

void waitKernel(const OpArgs& args, std::span<Tensor> out) {
  runner(args).wait(args.inputs[0], args.loc);
  kernels::copyValues(out[0], args.inputs[0]);
}

}  // namespace

const OpDef kAllReduce{"all_reduce", "kiln.all_reduce", allReduceShape, allReduceKernel,
                       nullptr, nullptr, kReadsNothing};
const OpDef kAllReduceStart{"all_reduce_start", "kiln.all_reduce_start", allReduceShape,
                            allReduceStartKernel, nullptr, nullptr, kReadsNothing};
const OpDef kWait{"wait", "kiln.wait", sameAsFirst, waitKernel, nullptr, nullptr, kReadsNothing};

}  // namespace ops

Tensor all_reduce_op(const Tensor& x, std::string_view kind, const SourceLoc& loc) {
  return dispatch1(ops::kAllReduce, {x}, {{"kind", std::string(kind)}}, loc);
}

Tensor all_reduce_start_op(const Tensor& x, std::string_view kind, const SourceLoc& loc) {
  return dispatch1(ops::kAllReduceStart, {x}, {{"kind", std::string(kind)}}, loc);
}

Tensor wait_op(const Tensor& started, const SourceLoc& loc) {
  return dispatch1(ops::kWait, {started}, {}, loc);
}

void detail::setCollectiveRunner(const CollectiveRunner* runner) { gRunner.store(runner); }

void detail::broadcastFromRank0(std::string_view op, const std::vector<Tensor>& tensors,
                                const SourceLoc& loc) {
  const detail::CollectiveRunner* installed = gRunner.load();
  if (!installed)
    throw Error::make(loc, op, "rank 0's parameters cannot be broadcast to the ranks of an ",
                      "MPI job before kiln::distributed::init() (//frontend:distributed)");
  installed->broadcastFromRank0(tensors, loc);
}

}  // namespace kiln

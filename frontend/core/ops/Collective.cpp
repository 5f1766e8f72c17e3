// The collective of the op table (kiln.all_reduce). Its kernel copies the operand into
// the output and hands that buffer to the runner kiln::distributed installed, which
// reduces it over MPI (kiln/core/Collective.h).
#include <atomic>

#include "frontend/core/kernels/Copy.h"
#include "frontend/core/ops/OpTable.h"
#include "frontend/core/ops/ShapeRules.h"
#include "kiln/core/Collective.h"
#include "kiln/core/Dispatcher.h"

namespace kiln {
namespace {

std::atomic<detail::AllReduceRunner> gRunner{nullptr};

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
  const detail::AllReduceRunner runner = gRunner.load();
  if (!runner)
    throw Error::make(args.loc, "all_reduce", "a ", args.inputs[0].dtype(), " ",
                      args.inputs[0].sizes(), " tensor cannot be reduced over the ranks of an ",
                      "MPI job before kiln::distributed::init() (//frontend:distributed)");
  kernels::copyValues(out[0], args.inputs[0]);
  runner(out[0], args.attrs.get<std::string>("kind"), args.loc);
}

}  // namespace

const OpDef kAllReduce{"all_reduce", "kiln.all_reduce", allReduceShape, allReduceKernel,
                       nullptr, nullptr, kReadsNothing};

}  // namespace ops

Tensor all_reduce_op(const Tensor& x, std::string_view kind, const SourceLoc& loc) {
  return dispatch1(ops::kAllReduce, {x}, {{"kind", std::string(kind)}}, loc);
}

void detail::setAllReduceRunner(AllReduceRunner runner) { gRunner.store(runner); }

}  // namespace kiln

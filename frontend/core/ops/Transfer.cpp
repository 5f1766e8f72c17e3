// Moving tensors between devices: Tensor::to(Device), cuda(), cpu(), and the copies the
// kernels make between devices. The move is an op of its own (not one of the table's
// primitives, which all run on one device) so autograd carries gradients back across it.
#include "frontend/core/kernels/Copy.h"
#include "frontend/core/ops/OpTable.h"
#include "kiln/core/Dispatcher.h"

namespace kiln {
namespace ops {
namespace {

Device targetOf(const Attrs& attrs, const SourceLoc& loc) {
  return Device::parse(attrs.get<std::string>("device"), loc);
}

std::vector<TensorMeta> toDeviceShape(const OpDef&, std::span<const TensorMeta> in, const Attrs& attrs,
                                      const SourceLoc& loc) {
  return {TensorMeta{in[0].shape, in[0].dtype, targetOf(attrs, loc)}};
}

void toDeviceKernel(const OpArgs& args, std::span<Tensor> out) {
  kernels::copyValues(out[0], args.inputs[0]);
}

std::vector<Tensor> toDeviceGrad(const GradArgs& a) {
  return {a.gradOutputs[0].to(a.inputs[0].device(), a.loc)};
}

}  // namespace

const OpDef kToDevice{"to", "", toDeviceShape, toDeviceKernel, nullptr, toDeviceGrad, kReadsNothing};

}  // namespace ops

Tensor Tensor::to(Device device, const SourceLoc& loc) const {
  if (!defined()) throw Error::make(loc, "to", "called on an undefined tensor");
  if (this->device() == device) return *this;
  return dispatch1(ops::kToDevice, {*this}, {{"device", device.str()}}, loc);
}

Tensor Tensor::cuda(const SourceLoc& loc) const { return to(Device(kCUDA, 0), loc); }
Tensor Tensor::cpu(const SourceLoc& loc) const { return to(Device(kCPU), loc); }

}  // namespace kiln

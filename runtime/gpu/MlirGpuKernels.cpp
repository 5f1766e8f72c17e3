// Reading the launches of kiln-gpu-pipeline's kernels (see MlirGpuKernels.h).
#include "runtime/gpu/MlirGpuKernels.h"

#include <cstring>

#include "dialect/KilnDialect.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Matchers.h"

namespace kiln::runtime::gpu {
namespace {

std::string nameOf(mlir::Operation* op) { return op->getName().getStringRef().str(); }

// A scalar kernel argument's bytes as the bare-pointer calling convention passes it (an
// index is an i64), or nullopt for a value not known at compile time.
std::optional<std::vector<char>> scalarBytes(mlir::Value value) {
  mlir::Attribute attr;
  if (!mlir::matchPattern(value, mlir::m_Constant(&attr))) return std::nullopt;
  std::vector<char> bytes;
  auto put = [&](const void* data, size_t n) {
    bytes.resize(n);
    std::memcpy(bytes.data(), data, n);
  };
  if (auto integer = llvm::dyn_cast<mlir::IntegerAttr>(attr)) {
    const unsigned width = integer.getType().isIndex() ? 64 : integer.getType().getIntOrFloatBitWidth();
    const int64_t v = integer.getValue().getSExtValue();
    if (width == 64) put(&v, 8);
    else if (width == 32) { const auto w = int32_t(v); put(&w, 4); }
    else return std::nullopt;
  } else if (auto real = llvm::dyn_cast<mlir::FloatAttr>(attr)) {
    if (real.getType().isF32()) { const auto f = float(real.getValueAsDouble()); put(&f, 4); }
    else if (real.getType().isF64()) { const double d = real.getValueAsDouble(); put(&d, 8); }
    else return std::nullopt;
  } else {
    return std::nullopt;
  }
  return bytes;
}

// The plan of one kernel function of kiln_kernels, or why there is none.
std::optional<LaunchPlan> planOf(mlir::func::FuncOp kernel, mlir::ModuleOp kernels, size_t operands,
                                 std::string& why) {
  LaunchPlan plan;
  plan.name = kernel.getSymName().str();
  plan.generator = "MLIR";
  plan.operands = operands;
  llvm::DenseMap<mlir::Value, int64_t> scratch;  // memref.alloc -> its offset in the scratch block
  // Views on the host side (a subview, a collapse or expand of a buffer) are their source
  // buffer: under the bare-pointer convention a kernel gets the base address and applies
  // the view's static offset and strides, which are in its parameter's type.
  llvm::DenseMap<mlir::Value, mlir::Value> viewOf;
  auto root = [&](mlir::Value value) {
    while (viewOf.count(value)) value = viewOf.lookup(value);
    return value;
  };
  for (mlir::Operation& op : kernel.getBody().front()) {
    if (llvm::isa<mlir::memref::SubViewOp, mlir::memref::CollapseShapeOp, mlir::memref::ExpandShapeOp,
                  mlir::memref::CastOp>(op)) {
      auto type = llvm::dyn_cast<mlir::MemRefType>(op.getResult(0).getType());
      int64_t offset = 0;
      llvm::SmallVector<int64_t> strides;
      if (!type || !type.hasStaticShape() || mlir::failed(type.getStridesAndOffset(strides, offset)) ||
          mlir::ShapedType::isDynamic(offset) || llvm::any_of(strides, mlir::ShapedType::isDynamic)) {
        why = "its host side views a buffer at a place known only at run time (" + nameOf(&op) + ")";
        return std::nullopt;
      }
      viewOf[op.getResult(0)] = op.getOperand(0);
      continue;
    }
    if (llvm::isa<mlir::func::ReturnOp, mlir::arith::ConstantOp, mlir::memref::DeallocOp>(op)) continue;
    if (auto alloc = llvm::dyn_cast<mlir::memref::AllocOp>(op)) {
      mlir::MemRefType type = alloc.getType();
      if (!type.hasStaticShape() || !type.getLayout().isIdentity() || !alloc.getOperands().empty()) {
        why = "it allocates a temporary of dynamic shape or layout";
        return std::nullopt;
      }
      const int64_t bits = type.getElementType().isIntOrFloat() ? type.getElementTypeBitWidth() : 64;
      const int64_t bytes = type.getNumElements() * std::max<int64_t>(1, bits / 8);
      scratch[alloc.getResult()] = plan.scratchBytes;
      plan.scratchBytes += (std::max<int64_t>(bytes, 1) + 255) / 256 * 256;  // each 256-byte aligned
      continue;
    }
    auto launchOp = llvm::dyn_cast<mlir::gpu::LaunchFuncOp>(op);
    if (!launchOp) {
      why = "its host side has " + nameOf(&op) + ", not only launches";
      return std::nullopt;
    }
    if (!launchOp.getAsyncDependencies().empty() || launchOp.getAsyncToken() ||
        launchOp.hasClusterSize() ||
        (launchOp.getDynamicSharedMemorySize() &&
         mlir::getConstantIntValue(launchOp.getDynamicSharedMemorySize()) != 0)) {
      why = "a launch is asynchronous, clustered or takes dynamic shared memory";
      return std::nullopt;
    }
    Launch launch;
    launch.entry = launchOp.getKernelName().str();
    mlir::Value sizes[6] = {launchOp.getGridSizeX(),  launchOp.getGridSizeY(),  launchOp.getGridSizeZ(),
                            launchOp.getBlockSizeX(), launchOp.getBlockSizeY(), launchOp.getBlockSizeZ()};
    for (int d = 0; d < 6; ++d) {
      std::optional<int64_t> size = mlir::getConstantIntValue(sizes[d]);
      if (!size || *size < 0 || *size > int64_t(UINT32_MAX)) {
        why = "a launch's grid or block size is not a constant";
        return std::nullopt;
      }
      (d < 3 ? launch.grid[d] : launch.block[d - 3]) = unsigned(*size);
    }
    for (mlir::Value operand : launchOp.getKernelOperands()) {
      const mlir::Value argument = root(operand);
      KernelParam param;
      auto block = llvm::dyn_cast<mlir::BlockArgument>(argument);
      if (block && block.getOwner() == &kernel.getBody().front()) {
        param.buffer = int64_t(block.getArgNumber());
      } else if (auto found = scratch.find(argument); found != scratch.end()) {
        param.kind = KernelParam::Scratch;
        param.buffer = found->second;
      } else if (std::optional<std::vector<char>> bytes = scalarBytes(argument)) {
        param.kind = KernelParam::Scalar;
        param.bytes = std::move(*bytes);
      } else {
        why = "a launch takes a value computed on the host";
        return std::nullopt;
      }
      launch.params.push_back(std::move(param));
    }
    auto binary = kernels.lookupSymbol<mlir::gpu::BinaryOp>(launchOp.getKernelModuleName());
    if (!binary || binary.getObjects().empty()) {
      why = "launch of @" + launch.entry + " has no gpu.binary";
      return std::nullopt;
    }
    auto object = llvm::cast<mlir::gpu::ObjectAttr>(binary.getObjects()[0]);
    launch.image = object.getObject().getValue().str();
    plan.launches.push_back(std::move(launch));
  }
  std::string schedule;
  llvm::raw_string_ostream out(schedule);
  out << "@" << plan.name << ": " << plan.launches.size() << " launch" << (plan.launches.size() == 1 ? "" : "es");
  if (plan.scratchBytes > 0) out << ", " << plan.scratchBytes << " bytes of scratch";
  for (const Launch& launch : plan.launches)
    out << " [" << launch.grid[0] << "x" << launch.grid[1] << "x" << launch.grid[2] << " blocks of "
        << launch.block[0] * launch.block[1] * launch.block[2] << "]";
  plan.schedule = schedule;
  return plan;
}

}  // namespace

GpuKernels readLaunchPlans(mlir::ModuleOp pipelined) {
  GpuKernels result;
  mlir::ModuleOp kernels;
  for (auto nested : pipelined.getOps<mlir::ModuleOp>())
    if (nested.getSymName() == mlir::kiln::kGpuKernelsModule) kernels = nested;
  if (!kernels) return result;
  for (auto kernel : kernels.getOps<mlir::func::FuncOp>()) {
    auto kind = kernel->getAttrOfType<mlir::StringAttr>(mlir::kiln::KilnDialect::getKernelAttrName());
    if (!kind || kind.getValue() != "fusion") continue;
    auto declaration = pipelined.lookupSymbol<mlir::func::FuncOp>(kernel.getSymName());
    const std::string name = kernel.getSymName().str();
    if (!declaration) {
      result.declined[name] = "the host has no declaration of it";
      continue;
    }
    std::string why;
    if (std::optional<LaunchPlan> plan = planOf(kernel, kernels, declaration.getNumArguments(), why))
      result.plans[name] = std::move(*plan);
    else
      result.declined[name] = why;
  }
  return result;
}

}  // namespace kiln::runtime::gpu

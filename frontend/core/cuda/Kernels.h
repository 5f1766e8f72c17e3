// Eager ops on CUDA tensors: the dispatcher hands an op whose operands live on a CUDA device
// here instead of to its CPU kernel. Kernels are CUDA C generated per op and dtype, compiled
// by NVRTC on first use (Nvrtc.h); matmul goes to cuBLASLt.
#pragma once

#include <set>
#include <span>
#include <string>
#include <vector>

#include "kiln/core/OpDef.h"
#include "kiln/core/Tensor.h"

namespace kiln::cuda {

// Computes `op` into `outputs` (fresh contiguous tensors, or an in-place target), all on
// the inputs' CUDA device. kiln::Error naming the op for an op without a CUDA kernel.
void runKernel(const OpDef& op, const OpArgs& args, std::span<Tensor> outputs);

// The names of the ops that have run on a CUDA device in this process (the GPU parity
// test checks that every op of the table is among them).
std::set<std::string> opsRun();

// dst = src elementwise: same shape and dtype, one CUDA device, any strides.
void copyValues(const Tensor& dst, const Tensor& src, const SourceLoc& loc);

// One generated kernel: what it computes, its entry point and its source.
struct KernelSource {
  std::string what;
  std::string name;
  std::string source;
};
// Every kernel the eager ops generate, for each dtype they take: the test that compiles
// them all to PTX and assembles that for sm_80 and sm_90 walks this list.
std::vector<KernelSource> allKernelSources();

// The families (one file each) add their kernels to the list above.
void elementwiseSources(std::vector<KernelSource>& out);
void reduceSources(std::vector<KernelSource>& out);
void indexingSources(std::vector<KernelSource>& out);
void blasSources(std::vector<KernelSource>& out);
void convSources(std::vector<KernelSource>& out);

// Elementwise family (Elementwise.cpp): whether it computes `op`, and computing it.
bool isElementwise(const OpDef& op);
void elementwise(const OpDef& op, const OpArgs& args, std::span<Tensor> outputs);

// The CUDA C expression the eager kernel of elementwise `op` computes (Elementwise.cpp):
// over operands a, b (select: c0, a, b) already loaded in the math type `M` of `in` (the
// generated source must typedef M), giving a value of `out`'s math type (bool for compare
// and a convert to bool) before it is stored; "" when `op` has no elementwise kernel. The
// NVRTC backend's fused kernels (runtime/nvrtc) use these, so fused and eager values agree.
std::string elementwiseExpression(const OpDef& op, const Attrs& attrs, DType in, DType out);

// Reduction family (Reduce.cpp): kiln.reduce.
bool isReduce(const OpDef& op);
void reduce(const OpDef& op, const OpArgs& args, std::span<Tensor> outputs);

// Indexing family (Index.cpp): concat, gather, scatter_add, and iota/rng computed on the host.
bool isIndexing(const OpDef& op);
void indexing(const OpDef& op, const OpArgs& args, std::span<Tensor> outputs);
// matmul and addmm (Blas.cpp): cuBLASLt, loaded with dlopen, for the floating dtypes; a
// generated kernel for int32/int64. Why cuBLASLt cannot be loaded ("" when it can).
bool isBlas(const OpDef& op);
void blas(const OpDef& op, const OpArgs& args, std::span<Tensor> outputs);
const std::string& cublasLtUnavailableReason();

// conv2d and pool2d (Conv.cpp): generated direct kernels.
bool isConv(const OpDef& op);
void conv(const OpDef& op, const OpArgs& args, std::span<Tensor> outputs);

// In place on the contiguous floating `out`, seen as [outer, channels, inner]: bias[c]
// added to channel c when `bias` is defined, then relu when `relu`, rounded as the CPU's
// kernels::biasAndRelu (Conv.cpp).
void biasAndRelu(const Tensor& out, const Tensor& bias, int64_t channels, int64_t inner, bool relu,
                 std::string_view op, const SourceLoc& loc);

}  // namespace kiln::cuda

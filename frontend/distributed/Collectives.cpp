// The collectives: argument checks, staging tensors into buffers MPI can use, and the
// Work that copies results back.
//
// MPI reads and writes host memory of its own element types. A tensor that is already a
// contiguous CPU tensor of such a type is handed over as is; any other (CUDA, 16-bit
// float, strided) is staged: copied into a contiguous CPU buffer (16-bit floats widened to
// float32, which also makes their sums exact to float32), and the result copied back when
// the Work completes.
#include <climits>
#include <cstring>
#include <limits>
#include <mutex>
#include <sstream>
#include <unordered_map>

#include "Environment.h"
#include "Mpi.h"
#include "WorkState.h"
#include "kiln/core/Autograd.h"
#include "kiln/core/Collective.h"
#include "kiln/core/Dispatcher.h"
#include "kiln/core/Ops.h"
#include "kiln/distributed/Distributed.h"

namespace kiln::distributed {

namespace {

using detail::Elem;

// The dtype a tensor travels as.
DType wireDType(DType dtype) {
  return dtype == kFloat16 || dtype == kBFloat16 ? kFloat32 : dtype;
}

Elem elemOf(DType wire) {
  switch (wire) {
    case DType::Float64: return Elem::Float64;
    case DType::Int32: return Elem::Int32;
    case DType::Int64: return Elem::Int64;
    case DType::Bool: return Elem::Bool;
    default: return Elem::Float32;
  }
}

std::string describe(const Tensor& t) { return kiln::detail::concat(t.dtype(), " ", t.shape()); }

// Whether `t` is being recorded (jit::trace, nn::Graph) rather than computed.
bool recording(const Tensor& t) { return currentDispatchHook() != nullptr || t.is_placeholder(); }

// Checks that apply to every tensor argument: defined, holding values, outside a trace.
void checkTensor(std::string_view op, const Tensor& t, std::string_view role, const SourceLoc& loc) {
  if (!t.defined()) throw Error::make(loc, op, role, " is an undefined tensor");
  if (recording(t))
    throw TraceError::make(loc, op, "of the collectives only all_reduce is recorded by traces; ",
                           "call this one outside jit::trace and nn::Graph (docs/DISTRIBUTED.md)");
  if (t.numel() > INT_MAX)
    throw ShapeError::make(loc, op, role, " ", describe(t), " has more than 2^31 - 1 ",
                           "elements, MPI's limit for one call");
}

void checkReduceOp(std::string_view op, ReduceOp reduce, const Tensor& t, const SourceLoc& loc) {
  if (reduce == ReduceOp::Mean && !t.is_floating_point())
    throw TypeError::make(loc, op, "a mean needs a floating-point tensor, got ", describe(t),
                          " (reduce with sum and divide)");
}

// `t` as a buffer MPI can read and write: `t` itself when it can be, else a staged copy.
Tensor wireBuffer(const Tensor& t, const SourceLoc& loc) {
  NoGradGuard noGrad;
  Tensor w = t.detach();
  if (!w.device().isCPU()) w = w.cpu(loc);
  if (w.dtype() != wireDType(w.dtype())) w = w.to(wireDType(w.dtype()), loc);
  return w.contiguous(loc);
}

bool sharesData(const Tensor& buffer, const Tensor& t) {
  return t.device().isCPU() && buffer.rawData() == t.rawData() && buffer.dtype() == t.dtype();
}

// Writes a completed buffer's values into `t`: in place already (a version bump, as any
// in-place write), or copied back from the stage.
void writeBack(const Tensor& t, const Tensor& buffer) {
  if (sharesData(buffer, t)) {
    ++t.impl()->version;
    return;
  }
  NoGradGuard noGrad;
  t.detach().copy_(buffer.view(t.shape()));
}

void divideInPlace(const Tensor& buffer, int divisor) {
  dispatchDType(buffer.dtype(), [&]<class T>() {
    if constexpr (std::is_floating_point_v<T>) {
      T* data = static_cast<T*>(buffer.rawData());
      for (int64_t i = 0, n = buffer.numel(); i < n; ++i) data[i] /= T(divisor);
    }
  });
}

std::vector<int> shardCounts(std::string_view op, const std::vector<Tensor>& shards,
                             std::string_view role, const Tensor& local, const SourceLoc& loc) {
  const int size = world_size(loc);
  if (int64_t(shards.size()) != size)
    throw Error::make(loc, op, "needs one ", role, " per rank (", size, "), got ", shards.size());
  std::vector<int> counts;
  int64_t total = 0;
  for (size_t r = 0; r < shards.size(); ++r) {
    const std::string name = kiln::detail::concat(role, "s[", r, "]");
    checkTensor(op, shards[r], name, loc);
    if (shards[r].dtype() != local.dtype())
      throw TypeError::make(loc, op, name, " is ", describe(shards[r]), ", expected ",
                            local.dtype(), " like ", describe(local));
    counts.push_back(int(shards[r].numel()));
    total += shards[r].numel();
  }
  if (total > INT_MAX)
    throw ShapeError::make(loc, op, "the ", role, "s hold ", total, " elements together, more ",
                           "than 2^31 - 1, MPI's limit for one call");
  const int64_t mine = shards[size_t(rank(loc))].numel();
  if (mine != local.numel())
    throw ShapeError::make(loc, op, role, "s[", rank(loc), "] (this rank's) is ",
                           describe(shards[size_t(rank(loc))]), " but ", describe(local),
                           " has ", local.numel(), " elements, not ", mine);
  return counts;
}

template <class Start>
Work launch(std::string_view op, std::string what, const SourceLoc& loc, Start&& start,
            std::vector<Tensor> keepAlive, std::function<void()> finish) {
  std::unique_ptr<detail::Request> request;
  try {
    request = start();
  } catch (const detail::MpiFailure& failure) {
    throw Error::make(loc, op, failure.what(), " (", what, ")");
  }
  auto state = std::make_shared<detail::WorkState>(std::string(op), std::move(what), loc,
                                                   std::move(request), std::move(keepAlive),
                                                   std::move(finish));
  detail::trackProgress(state);
  return Work(std::move(state));
}

}  // namespace

Work barrier_async(const SourceLoc& loc) {
  constexpr std::string_view kOp = "distributed::barrier";
  detail::requireInitialized(kOp, loc);
  return launch(kOp, "barrier", loc, [] { return detail::startBarrier(); }, {}, nullptr);
}

void barrier(const SourceLoc& loc) { barrier_async(loc).wait(loc); }

namespace {

// A recording takes all_reduce as kiln.all_reduce and all_reduce_async as
// kiln.all_reduce_start, whose Work records the kiln.wait when waited for, each followed
// by a write of the result into `tensor`: the program runs them on every call.
Work recordAllReduce(std::string_view kOp, const Tensor& tensor, ReduceOp op, bool async,
                     const SourceLoc& loc) {
  checkReduceOp(kOp, op, tensor, loc);
  NoGradGuard noGrad;
  const std::string kind = kiln::detail::concat(op);
  if (!async) {
    Tensor(tensor).copy_(all_reduce_op(tensor, kind, loc), loc);
    return Work();
  }
  const Tensor started = all_reduce_start_op(tensor, kind, loc);
  return Work(std::make_shared<detail::WorkState>(
      std::string(kOp), kiln::detail::concat(describe(tensor), ", ", op), loc, nullptr,
      std::vector<Tensor>{}, [tensor, started, loc] {
        NoGradGuard noGrad;
        Tensor(tensor).copy_(wait_op(started, loc), loc);
      }));
}

ReduceOp reduceOpOf(std::string_view kind) {
  return kind == "mean" ? ReduceOp::Mean : kind == "max" ? ReduceOp::Max : ReduceOp::Sum;
}

// The kernels' collectives in flight, by the storage they write (kiln.all_reduce_start's
// result, which its kiln.wait reads).
std::mutex gInFlightMutex;
std::unordered_map<const void*, Work> gInFlight;

}  // namespace

void detail::runAllReduce(const Tensor& buffer, std::string_view kind, const SourceLoc& loc) {
  all_reduce(buffer, reduceOpOf(kind), loc);
}

void detail::startAllReduce(const Tensor& buffer, std::string_view kind, const SourceLoc& loc) {
  Work work = all_reduce_async(buffer, reduceOpOf(kind), loc);
  std::lock_guard lock(gInFlightMutex);
  gInFlight[buffer.rawData()] = std::move(work);
}

void detail::waitAllReduce(const Tensor& buffer, const SourceLoc& loc) {
  Work work;
  {
    std::lock_guard lock(gInFlightMutex);
    auto found = gInFlight.find(buffer.rawData());
    if (found == gInFlight.end())
      throw Error::make(loc, "wait", "no all_reduce_start is in flight on this ",
                        describe(buffer), " tensor (each start is waited for once, by the "
                        "wait that takes its result)");
    work = std::move(found->second);
    gInFlight.erase(found);
  }
  work.wait(loc);
}

Work all_reduce_async(const Tensor& tensor, ReduceOp op, const SourceLoc& loc) {
  constexpr std::string_view kOp = "distributed::all_reduce";
  detail::requireInitialized(kOp, loc);
  if (tensor.defined() && recording(tensor)) return recordAllReduce(kOp, tensor, op, true, loc);
  checkTensor(kOp, tensor, "the tensor", loc);
  checkReduceOp(kOp, op, tensor, loc);
  Tensor buffer = wireBuffer(tensor, loc);
  const int size = world_size(loc);
  return launch(
      kOp, kiln::detail::concat(describe(tensor), ", ", op), loc,
      [&] {
        return detail::startAllReduce(buffer.rawData(), int(buffer.numel()),
                                      elemOf(buffer.dtype()), op);
      },
      {buffer}, [tensor, buffer, op, size] {
        if (op == ReduceOp::Mean) divideInPlace(buffer, size);
        writeBack(tensor, buffer);
      });
}

void all_reduce(const Tensor& tensor, ReduceOp op, const SourceLoc& loc) {
  constexpr std::string_view kOp = "distributed::all_reduce";
  if (tensor.defined() && recording(tensor)) {
    detail::requireInitialized(kOp, loc);
    recordAllReduce(kOp, tensor, op, false, loc);
    return;
  }
  all_reduce_async(tensor, op, loc).wait(loc);
}

Work broadcast_async(const Tensor& tensor, int src, const SourceLoc& loc) {
  constexpr std::string_view kOp = "distributed::broadcast";
  detail::requireInitialized(kOp, loc);
  checkTensor(kOp, tensor, "the tensor", loc);
  if (src < 0 || src >= world_size(loc))
    throw Error::make(loc, kOp, "source rank ", src, " is not in [0, ", world_size(loc), ")");
  Tensor buffer = wireBuffer(tensor, loc);
  return launch(
      kOp, kiln::detail::concat(describe(tensor), ", from rank ", src), loc,
      [&] {
        return detail::startBroadcast(buffer.rawData(), int(buffer.numel()),
                                      elemOf(buffer.dtype()), src);
      },
      {buffer}, [tensor, buffer] { writeBack(tensor, buffer); });
}

void broadcast(const Tensor& tensor, int src, const SourceLoc& loc) {
  broadcast_async(tensor, src, loc).wait(loc);
}

void detail::broadcastFromRank0(const std::vector<Tensor>& tensors, const SourceLoc& loc) {
  std::vector<Work> works;
  for (const Tensor& t : tensors) works.push_back(broadcast_async(t, 0, loc));
  for (Work& w : works) w.wait(loc);
}

Work all_gather_async(const std::vector<Tensor>& outputs, const Tensor& input,
                      const SourceLoc& loc) {
  constexpr std::string_view kOp = "distributed::all_gather";
  detail::requireInitialized(kOp, loc);
  checkTensor(kOp, input, "the input", loc);
  const std::vector<int> counts = shardCounts(kOp, outputs, "output", input, loc);
  Tensor send = wireBuffer(input, loc);
  int64_t total = 0;
  for (int count : counts) total += count;
  Tensor recv = empty({total}, TensorOptions(send.dtype()), loc);
  return launch(
      kOp, kiln::detail::concat("input ", describe(input), ", ", counts.size(), " ranks"), loc,
      [&] { return detail::startAllGather(send.rawData(), recv.rawData(), counts, elemOf(send.dtype())); },
      {send, recv}, [outputs, recv, counts] {
        int64_t offset = 0;
        for (size_t r = 0; r < outputs.size(); ++r) {
          writeBack(outputs[r], recv.narrow(0, offset, counts[r]));
          offset += counts[r];
        }
      });
}

void all_gather(const std::vector<Tensor>& outputs, const Tensor& input, const SourceLoc& loc) {
  all_gather_async(outputs, input, loc).wait(loc);
}

Work reduce_scatter_async(const Tensor& output, const std::vector<Tensor>& inputs, ReduceOp op,
                          const SourceLoc& loc) {
  constexpr std::string_view kOp = "distributed::reduce_scatter";
  detail::requireInitialized(kOp, loc);
  checkTensor(kOp, output, "the output", loc);
  checkReduceOp(kOp, op, output, loc);
  const std::vector<int> counts = shardCounts(kOp, inputs, "input", output, loc);
  std::vector<Tensor> flat;
  for (const Tensor& input : inputs) flat.push_back(wireBuffer(input, loc).flatten(0, -1, loc));
  Tensor send = cat(flat, 0, loc);
  Tensor recv = wireBuffer(output, loc);
  const int size = world_size(loc);
  return launch(
      kOp, kiln::detail::concat("output ", describe(output), ", ", op, ", ", counts.size(), " ranks"),
      loc,
      [&] {
        return detail::startReduceScatter(send.rawData(), recv.rawData(), counts,
                                          elemOf(send.dtype()), op);
      },
      {send, recv}, [output, recv, op, size] {
        if (op == ReduceOp::Mean) divideInPlace(recv, size);
        writeBack(output, recv);
      });
}

void reduce_scatter(const Tensor& output, const std::vector<Tensor>& inputs, ReduceOp op,
                    const SourceLoc& loc) {
  reduce_scatter_async(output, inputs, op, loc).wait(loc);
}

}  // namespace kiln::distributed

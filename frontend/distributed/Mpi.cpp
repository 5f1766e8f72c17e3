// The MPI seam of Mpi.h on Open MPI's C API (or stubs without MPI).
#include "Mpi.h"

#include <cstdlib>
#include <mutex>
#include <string>

#if KILN_HAVE_MPI
#include <mpi.h>
#endif

namespace kiln::distributed::detail {

#if KILN_HAVE_MPI

namespace {

// MPI_THREAD_SERIALIZED: one MPI call at a time in the process. The caller's thread and
// the progress thread (Progress.cpp) both call MPI, so every call here holds this lock.
std::mutex gMpiMutex;

using Lock = std::lock_guard<std::mutex>;

void check(int code, const char* call) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw MpiFailure(std::string(call) + " failed: " + std::string(text, size_t(length)));
}

MPI_Datatype mpiType(Elem elem) {
  switch (elem) {
    case Elem::Float32: return MPI_FLOAT;
    case Elem::Float64: return MPI_DOUBLE;
    case Elem::Int32: return MPI_INT32_T;
    case Elem::Int64: return MPI_INT64_T;
    case Elem::Bool: return MPI_C_BOOL;
  }
  throw MpiFailure("no MPI datatype for this element type");
}

// MPI defines no arithmetic on MPI_C_BOOL, only logical ops: a sum or max of bools is an or.
MPI_Op mpiOp(ReduceOp op, Elem elem) {
  if (elem == Elem::Bool) return MPI_LOR;
  return op == ReduceOp::Max ? MPI_MAX : MPI_SUM;
}

class MpiRequest : public Request {
 public:
  bool test() override {
    int done = 0;
    Lock lock(gMpiMutex);
    check(MPI_Test(&request_, &done, MPI_STATUS_IGNORE), "MPI_Test");
    return done != 0;
  }
  MPI_Request* get() { return &request_; }

 private:
  MPI_Request request_ = MPI_REQUEST_NULL;
};

template <class Start>
std::unique_ptr<Request> start(const char* call, Start&& startCall) {
  auto request = std::make_unique<MpiRequest>();
  Lock lock(gMpiMutex);
  check(startCall(request->get()), call);
  return request;
}

}  // namespace

bool mpiBuilt() { return true; }

void mpiInit() {
  // Kiln calls MPI from one thread at a time (gMpiMutex), not always the main one: the
  // training loop's thread and the progress thread that advances collectives in flight.
  int provided = 0;
  Lock lock(gMpiMutex);
  check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided), "MPI_Init_thread");
  if (provided < MPI_THREAD_SERIALIZED)
    throw MpiFailure("this MPI does not support MPI_THREAD_SERIALIZED");
  // Errors come back as codes (and become kiln::Errors) instead of aborting the job.
  check(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
}

void mpiFinalize() {
  Lock lock(gMpiMutex);
  check(MPI_Finalize(), "MPI_Finalize");
}

int mpiRank() {
  int rank = 0;
  Lock lock(gMpiMutex);
  check(MPI_Comm_rank(MPI_COMM_WORLD, &rank), "MPI_Comm_rank");
  return rank;
}

int mpiSize() {
  int size = 0;
  Lock lock(gMpiMutex);
  check(MPI_Comm_size(MPI_COMM_WORLD, &size), "MPI_Comm_size");
  return size;
}

void mpiAbort(int exitCode) {
  MPI_Abort(MPI_COMM_WORLD, exitCode);
  std::abort();  // MPI_Abort does not return; this tells the compiler so
}

std::unique_ptr<Request> startBarrier() {
  return start("MPI_Ibarrier", [](MPI_Request* r) { return MPI_Ibarrier(MPI_COMM_WORLD, r); });
}

std::unique_ptr<Request> startAllReduce(void* data, int count, Elem elem, ReduceOp op) {
  return start("MPI_Iallreduce", [&](MPI_Request* r) {
    return MPI_Iallreduce(MPI_IN_PLACE, data, count, mpiType(elem), mpiOp(op, elem),
                          MPI_COMM_WORLD, r);
  });
}

std::unique_ptr<Request> startBroadcast(void* data, int count, Elem elem, int root) {
  return start("MPI_Ibcast", [&](MPI_Request* r) {
    return MPI_Ibcast(data, count, mpiType(elem), root, MPI_COMM_WORLD, r);
  });
}

std::unique_ptr<Request> startAllGather(const void* send, void* recv,
                                        const std::vector<int>& counts, Elem elem) {
  // The displacements must outlive the call until it completes; the request keeps them.
  struct Gather : MpiRequest {
    std::vector<int> counts, displacements;
  };
  auto request = std::make_unique<Gather>();
  request->counts = counts;
  int offset = 0;
  for (int count : counts) {
    request->displacements.push_back(offset);
    offset += count;
  }
  const int sendCount = counts[size_t(mpiRank())];
  Lock lock(gMpiMutex);
  check(MPI_Iallgatherv(send, sendCount, mpiType(elem), recv, request->counts.data(),
                        request->displacements.data(), mpiType(elem), MPI_COMM_WORLD,
                        request->get()),
        "MPI_Iallgatherv");
  return request;
}

std::unique_ptr<Request> startReduceScatter(const void* send, void* recv,
                                            const std::vector<int>& counts, Elem elem,
                                            ReduceOp op) {
  struct Scatter : MpiRequest {
    std::vector<int> counts;
  };
  auto request = std::make_unique<Scatter>();
  request->counts = counts;
  Lock lock(gMpiMutex);
  check(MPI_Ireduce_scatter(send, recv, request->counts.data(), mpiType(elem),
                            mpiOp(op, elem), MPI_COMM_WORLD, request->get()),
        "MPI_Ireduce_scatter");
  return request;
}

#else  // !KILN_HAVE_MPI

namespace {
[[noreturn]] void unreachable() { throw MpiFailure("Kiln was built without MPI"); }
}  // namespace

bool mpiBuilt() { return false; }
void mpiInit() { unreachable(); }
void mpiFinalize() { unreachable(); }
int mpiRank() { unreachable(); }
int mpiSize() { unreachable(); }
void mpiAbort(int exitCode) { std::exit(exitCode); }
std::unique_ptr<Request> startBarrier() { unreachable(); }
std::unique_ptr<Request> startAllReduce(void*, int, Elem, ReduceOp) { unreachable(); }
std::unique_ptr<Request> startBroadcast(void*, int, Elem, int) { unreachable(); }
std::unique_ptr<Request> startAllGather(const void*, void*, const std::vector<int>&, Elem) {
  unreachable();
}
std::unique_ptr<Request> startReduceScatter(const void*, void*, const std::vector<int>&, Elem,
                                            ReduceOp) {
  unreachable();
}

#endif

}  // namespace kiln::distributed::detail

// init/finalize, rank and world size, and the wait timeout from KILN_DIST_TIMEOUT.
#include "Environment.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>

#include "Mpi.h"
#include "WorkState.h"
#include "kiln/core/Collective.h"
#include "kiln/distributed/Distributed.h"

namespace kiln::distributed {

namespace {

constexpr double kDefaultTimeoutSeconds = 300;

struct State {
  bool initialized = false;
  bool finalized = false;
  int rank = 0;
  int worldSize = 1;
  double timeoutSeconds = kDefaultTimeoutSeconds;
};

State& state() {
  static State s;
  return s;
}

double timeoutFromEnvironment(const SourceLoc& loc) {
  const char* text = std::getenv("KILN_DIST_TIMEOUT");
  if (text == nullptr || *text == '\0') return kDefaultTimeoutSeconds;
  char* end = nullptr;
  errno = 0;
  const double seconds = std::strtod(text, &end);
  if (errno != 0 || *end != '\0' || !std::isfinite(seconds) || seconds <= 0)
    throw Error::make(loc, "distributed::init", "KILN_DIST_TIMEOUT must be a positive number of ",
                      "seconds, got '", text, "'");
  return seconds;
}

}  // namespace

namespace detail {

void requireBuilt(std::string_view op, const SourceLoc& loc) {
  if (!detail::mpiBuilt())
    throw Error::make(loc, op, "Kiln was built without MPI (install Open MPI with ",
                      "scripts/bootstrap.sh and rebuild; docs/DISTRIBUTED.md)");
}

void requireInitialized(std::string_view op, const SourceLoc& loc) {
  requireBuilt(op, loc);
  if (!state().initialized)
    throw Error::make(loc, op, state().finalized ? "called after distributed::finalize()"
                                                 : "call distributed::init() first");
}

}  // namespace detail

std::ostream& operator<<(std::ostream& os, ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum: return os << "sum";
    case ReduceOp::Mean: return os << "mean";
    case ReduceOp::Max: return os << "max";
  }
  return os << "ReduceOp(" << int(op) << ")";
}

bool is_available() { return detail::mpiBuilt(); }

void init(const SourceLoc& loc) {
  constexpr std::string_view kOp = "distributed::init";
  detail::requireBuilt(kOp, loc);
  State& s = state();
  if (s.initialized) throw Error::make(loc, kOp, "already initialized");
  if (s.finalized)
    throw Error::make(loc, kOp, "called after finalize(): MPI allows one init per process");
  const double timeout = timeoutFromEnvironment(loc);
  try {
    detail::mpiInit();
    s.rank = detail::mpiRank();
    s.worldSize = detail::mpiSize();
  } catch (const detail::MpiFailure& failure) {
    throw Error::make(loc, kOp, failure.what());
  }
  s.timeoutSeconds = timeout;
  s.initialized = true;
  detail::configureProgress();
  static const kiln::detail::CollectiveRunner kRunner{&detail::runAllReduce,
                                                      &detail::startAllReduce,
                                                      &detail::waitAllReduce,
                                                      &detail::broadcastFromRank0};
  kiln::detail::setCollectiveRunner(&kRunner);
}

bool is_initialized() { return state().initialized; }

void finalize(const SourceLoc& loc) {
  detail::requireInitialized("distributed::finalize", loc);
  state().initialized = false;
  state().finalized = true;
  kiln::detail::setCollectiveRunner(nullptr);
  detail::stopProgress();
  try {
    detail::mpiFinalize();
  } catch (const detail::MpiFailure& failure) {
    throw Error::make(loc, "distributed::finalize", failure.what());
  }
}

void abort(int exit_code) { detail::mpiAbort(exit_code); }

int rank(const SourceLoc& loc) {
  detail::requireInitialized("distributed::rank", loc);
  return state().rank;
}

int world_size(const SourceLoc& loc) {
  detail::requireInitialized("distributed::world_size", loc);
  return state().worldSize;
}

double timeout_seconds() { return state().timeoutSeconds; }

}  // namespace kiln::distributed

// What a Work handle points to: one MPI request, what to do once it completes (copy staged
// results back, divide for a mean), and what to say if it never does.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "Mpi.h"
#include "kiln/core/Tensor.h"

namespace kiln::distributed::detail {

class WorkState {
 public:
  // `what` describes the call for messages ("float32 [4, 3], sum"); `keepAlive` holds the
  // buffers MPI reads and writes until it is done; `finish` runs once, after completion,
  // on the thread that sees it complete. A null `request` is a collective a trace recorded:
  // it completes when first polled, running `finish`.
  WorkState(std::string op, std::string what, const SourceLoc& started,
            std::unique_ptr<Request> request, std::vector<Tensor> keepAlive,
            std::function<void()> finish);

  bool poll(const SourceLoc& loc);
  void wait(const SourceLoc& loc);

 private:
  void complete();

  std::string op_;
  std::string what_;
  SourceLoc started_;
  std::unique_ptr<Request> request_;
  std::vector<Tensor> keepAlive_;
  std::function<void()> finish_;
  bool done_ = false;
};

}  // namespace kiln::distributed::detail

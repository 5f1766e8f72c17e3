#include "examples/common/DataParallel.h"

#include <cstdlib>
#include <exception>
#include <iostream>
#include <vector>

#include "kiln/core/Ops.h"
#include "kiln/distributed/Distributed.h"

namespace kiln::examples {

namespace {

class MpiReplicas : public Replicas {
 public:
  MpiReplicas() { distributed::init(); }
  ~MpiReplicas() override {
    if (std::uncaught_exceptions() > 0) return;
    try {
      distributed::finalize();
    } catch (const std::exception& e) {
      std::cerr << "distributed::finalize: " << e.what() << "\n";
    }
  }
  MpiReplicas(const MpiReplicas&) = delete;
  MpiReplicas& operator=(const MpiReplicas&) = delete;

  int rank() const override { return distributed::rank(); }
  int size() const override { return distributed::world_size(); }
  std::vector<double> sum(std::vector<double> values) const override {
    Tensor t = tensor(values);
    distributed::all_reduce(t, distributed::ReduceOp::Sum);
    const double* summed = t.data_ptr<double>();
    return std::vector<double>(summed, summed + values.size());
  }
  void average(const std::vector<Tensor>& tensors) const override {
    for (const Tensor& t : tensors)
      if (t.is_floating_point()) distributed::all_reduce(t, distributed::ReduceOp::Mean);
  }
  // Each tensor's largest and smallest values over the ranks (max of v and of -v, in
  // float64, exact for float32 and counters) are equal where every rank has the same.
  int64_t countUnequal(const std::vector<Tensor>& tensors) const override {
    int64_t unequal = 0;
    for (const Tensor& t : tensors) {
      if (t.numel() == 0) continue;
      Tensor highest = t.detach().to(kFloat64).contiguous(), lowestNegated = highest * -1.0;
      distributed::all_reduce(highest, distributed::ReduceOp::Max);
      distributed::all_reduce(lowestNegated, distributed::ReduceOp::Max);
      if ((highest + lowestNegated).max().item<double>() != 0.0) ++unequal;
    }
    return unequal;
  }
};

}  // namespace

std::unique_ptr<Replicas> joinReplicas(const std::string& program, const TrainingOptions& o) {
  if (!o.distributed) return std::make_unique<Replicas>();
  auto replicas = std::make_unique<MpiReplicas>();
  if (o.batchSize % replicas->size() != 0) {
    if (replicas->root())
      std::cerr << program << ": --batch-size " << o.batchSize << " is not a multiple of the "
                << replicas->size() << " ranks (each rank takes an equal share of a batch)\n";
    replicas.reset();
    std::exit(2);
  }
  return replicas;
}

}  // namespace kiln::examples

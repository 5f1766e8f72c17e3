// Learning-rate schedulers (StepLR, CosineAnnealingLR) over an optimizer's parameter
// groups, as torch::optim's and PyTorch 1.13's torch.optim.lr_scheduler.
#pragma once

#include <cstdint>
#include <vector>

#include "kiln/optim/Optimizer.h"

namespace kiln::optim {

// Construction counts as epoch 0 and keeps the groups' learning rates (PyTorch's initial
// step). step() advances one epoch with PyTorch's recursive form, which scales the current
// learning rates, so schedulers chain and manual changes carry on; step(epoch) jumps to
// `epoch` with the closed form from the base rates (PyTorch's deprecated epoch argument).
class LRScheduler {
 public:
  explicit LRScheduler(Optimizer& optimizer);
  LRScheduler(const LRScheduler&) = delete;
  LRScheduler& operator=(const LRScheduler&) = delete;
  virtual ~LRScheduler() = default;

  void step();
  void step(int64_t epoch);
  // The learning rate of each group as the last step set it.
  const std::vector<double>& get_last_lr() const { return lastLr_; }
  int64_t last_epoch() const { return lastEpoch_; }
  // The groups' learning rates when the scheduler was made.
  const std::vector<double>& base_lrs() const { return baseLrs_; }

 protected:
  // The rates for last_epoch() from the groups' current ones.
  virtual std::vector<double> get_lr() const = 0;
  // The rates for last_epoch() from base_lrs() alone.
  virtual std::vector<double> closed_form_lr() const = 0;
  std::vector<double> current_lrs() const;

 private:
  void apply(const std::vector<double>& lrs);

  Optimizer& optimizer_;
  std::vector<double> baseLrs_;
  std::vector<double> lastLr_;
  int64_t lastEpoch_ = 0;
};

// Multiplies the learning rates by `gamma` every `step_size` epochs:
// lr = base_lr * gamma^(epoch / step_size).
class StepLR : public LRScheduler {
 public:
  StepLR(Optimizer& optimizer, int64_t step_size, double gamma = 0.1,
         const SourceLoc& loc = SourceLoc::current());

 protected:
  std::vector<double> get_lr() const override;
  std::vector<double> closed_form_lr() const override;

 private:
  int64_t stepSize_;
  double gamma_;
};

// Cosine annealing from base_lr to eta_min over T_max epochs (SGDR without restarts):
// lr = eta_min + (base_lr - eta_min) * (1 + cos(pi * epoch / T_max)) / 2; past T_max the
// recursive form keeps following the cosine back up, as PyTorch's does.
class CosineAnnealingLR : public LRScheduler {
 public:
  CosineAnnealingLR(Optimizer& optimizer, int64_t T_max, double eta_min = 0,
                    const SourceLoc& loc = SourceLoc::current());

 protected:
  std::vector<double> get_lr() const override;
  std::vector<double> closed_form_lr() const override;

 private:
  int64_t tMax_;
  double etaMin_;
};

}  // namespace kiln::optim

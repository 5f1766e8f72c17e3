// StepLR and CosineAnnealingLR with PyTorch 1.13's recursive and closed forms, term for
// term, so the learning rates agree to the last bit.
#include "kiln/optim/LRScheduler.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace kiln::optim {

LRScheduler::LRScheduler(Optimizer& optimizer)
    : optimizer_(optimizer), baseLrs_(current_lrs()), lastLr_(baseLrs_) {}

std::vector<double> LRScheduler::current_lrs() const {
  std::vector<double> lrs;
  for (const OptimizerParamGroup& group : optimizer_.param_groups())
    lrs.push_back(group.options().get_lr());
  return lrs;
}

void LRScheduler::step() {
  ++lastEpoch_;
  apply(get_lr());
}

void LRScheduler::step(int64_t epoch) {
  lastEpoch_ = epoch;
  apply(closed_form_lr());
}

void LRScheduler::apply(const std::vector<double>& lrs) {
  // Groups added after the scheduler was made keep their rates (PyTorch zips the lists).
  std::vector<OptimizerParamGroup>& groups = optimizer_.param_groups();
  size_t n = std::min(groups.size(), lrs.size());
  for (size_t i = 0; i < n; ++i) groups[i].options().set_lr(lrs[i]);
  lastLr_.assign(lrs.begin(), lrs.begin() + ptrdiff_t(n));
}

namespace {

// Python's // on integers.
int64_t floorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

void checkPositive(int64_t value, const char* name, const char* op, const SourceLoc& loc) {
  if (value <= 0) throw Error::make(loc, op, name, " must be positive, got ", value);
}

}  // namespace

StepLR::StepLR(Optimizer& optimizer, int64_t step_size, double gamma, const SourceLoc& loc)
    : LRScheduler(optimizer), stepSize_(step_size), gamma_(gamma) {
  checkPositive(step_size, "step_size", "optim::StepLR", loc);
}

std::vector<double> StepLR::get_lr() const {
  std::vector<double> lrs = current_lrs();
  if (last_epoch() == 0 || last_epoch() % stepSize_ != 0) return lrs;
  for (double& lr : lrs) lr = lr * gamma_;
  return lrs;
}

std::vector<double> StepLR::closed_form_lr() const {
  std::vector<double> lrs;
  for (double base : base_lrs())
    lrs.push_back(base * std::pow(gamma_, double(floorDiv(last_epoch(), stepSize_))));
  return lrs;
}

CosineAnnealingLR::CosineAnnealingLR(Optimizer& optimizer, int64_t T_max, double eta_min,
                                     const SourceLoc& loc)
    : LRScheduler(optimizer), tMax_(T_max), etaMin_(eta_min) {
  checkPositive(T_max, "T_max", "optim::CosineAnnealingLR", loc);
}

std::vector<double> CosineAnnealingLR::get_lr() const {
  constexpr double pi = std::numbers::pi;
  const double epoch = double(last_epoch()), tMax = double(tMax_);
  std::vector<double> lrs = current_lrs();
  if (last_epoch() == 0) return lrs;
  const std::vector<double>& base = base_lrs();
  const size_t n = std::min(lrs.size(), base.size());
  lrs.resize(n);
  // Python's (e - 1 - T) % (2T) == 0; divisibility does not depend on the sign convention.
  if ((last_epoch() - 1 - tMax_) % (2 * tMax_) == 0) {
    for (size_t i = 0; i < n; ++i)
      lrs[i] = lrs[i] + (base[i] - etaMin_) * (1 - std::cos(pi / tMax)) / 2;
    return lrs;
  }
  for (size_t i = 0; i < n; ++i)
    lrs[i] = (1 + std::cos(pi * epoch / tMax)) / (1 + std::cos(pi * (epoch - 1) / tMax)) *
                 (lrs[i] - etaMin_) +
             etaMin_;
  return lrs;
}

std::vector<double> CosineAnnealingLR::closed_form_lr() const {
  constexpr double pi = std::numbers::pi;
  std::vector<double> lrs;
  for (double base : base_lrs())
    lrs.push_back(etaMin_ +
                  (base - etaMin_) * (1 + std::cos(pi * double(last_epoch()) / double(tMax_))) / 2);
  return lrs;
}

}  // namespace kiln::optim

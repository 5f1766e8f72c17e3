// StepLR and CosineAnnealingLR against PyTorch 1.13's learning rates over 16 epochs
// (OptimGoldens.h): recursive and closed forms, two groups, and chained schedulers.
#include <gtest/gtest.h>

#include "kiln/core/Ops.h"
#include "kiln/optim/LRScheduler.h"
#include "kiln/optim/SGD.h"
#include "test/unit/frontend/core/ExpectError.h"
#include "test/unit/frontend/optim/OptimGoldens.h"

namespace kiln::optim {
namespace {

using kiln::testing::at;

const golden::ScheduleGolden& findSchedule(const std::string& name) {
  for (const auto& g : golden::scheduleGoldens())
    if (g.name == name) return g;
  throw std::runtime_error("no schedule golden named " + name);
}

// Two groups with learning rates 0.1 and 0.02, as the script's.
class Schedules : public ::testing::Test {
 protected:
  Schedules() : opt_(groups(), 1.0) {}

  static std::vector<OptimizerParamGroup> groups() {
    std::vector<OptimizerParamGroup> out;
    out.emplace_back(std::vector<Tensor>{zeros({1}).requires_grad_()},
                     std::make_unique<SGDOptions>(0.1));
    out.emplace_back(std::vector<Tensor>{zeros({1}).requires_grad_()},
                     std::make_unique<SGDOptions>(0.02));
    return out;
  }

  // Steps every scheduler once per epoch (with the epoch number for the closed form) and
  // compares the last one's get_last_lr(), and the groups' rates, with PyTorch's.
  void expectSchedule(const std::string& name, const std::vector<LRScheduler*>& schedulers,
                      bool closedForm = false) {
    SCOPED_TRACE(name);
    const golden::ScheduleGolden& golden = findSchedule(name);
    for (size_t epoch = 0; epoch < golden.lrs.size(); ++epoch) {
      if (epoch > 0)
        for (LRScheduler* s : schedulers)
          closedForm ? s->step(int64_t(epoch)) : s->step();
      const std::vector<double>& lrs = schedulers.back()->get_last_lr();
      ASSERT_EQ(lrs.size(), 2u);
      for (size_t g = 0; g < 2; ++g) {
        EXPECT_DOUBLE_EQ(lrs[g], golden.lrs[epoch][g]) << "epoch " << epoch << ", group " << g;
        EXPECT_EQ(opt_.param_groups()[g].options().get_lr(), lrs[g]);
      }
      EXPECT_EQ(schedulers.back()->last_epoch(), int64_t(epoch));
    }
  }

  SGD opt_;
};

TEST_F(Schedules, StepLRMatchesPyTorch) {
  StepLR scheduler(opt_, /*step_size=*/3, /*gamma=*/0.5);
  expectSchedule("step_lr", {&scheduler});
}

TEST_F(Schedules, StepLRClosedFormMatchesPyTorch) {
  StepLR scheduler(opt_, 3, 0.5);
  expectSchedule("step_lr_closed", {&scheduler}, /*closedForm=*/true);
}

TEST_F(Schedules, CosineAnnealingLRMatchesPyTorchPastTMax) {
  CosineAnnealingLR scheduler(opt_, /*T_max=*/4, /*eta_min=*/0.001);
  EXPECT_EQ(scheduler.base_lrs(), (std::vector<double>{0.1, 0.02}));
  expectSchedule("cosine", {&scheduler});
}

TEST_F(Schedules, CosineAnnealingLRClosedFormMatchesPyTorch) {
  CosineAnnealingLR scheduler(opt_, 4, 0.001);
  expectSchedule("cosine_closed", {&scheduler}, true);
}

TEST_F(Schedules, RecursiveFormsChain) {
  CosineAnnealingLR cosine(opt_, 5, 0.0);
  StepLR step(opt_, 4, 0.3);
  expectSchedule("cosine_then_step", {&cosine, &step});
}

TEST_F(Schedules, RejectNonPositivePeriods) {
  EXPECT_KILN_ERROR(StepLR(opt_, 0), Error,
                    "kiln::optim::StepLR: step_size must be positive, got 0" + at());
  EXPECT_KILN_ERROR(CosineAnnealingLR(opt_, -3), Error,
                    "kiln::optim::CosineAnnealingLR: T_max must be positive, got -3" + at());
}

}  // namespace
}  // namespace kiln::optim

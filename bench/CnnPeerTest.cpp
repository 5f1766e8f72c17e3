// bench/cnn_step's peer is the same network as Kiln's: LibTorch's mobilenet_v2
// (TorchMobileNetV2.h) takes Kiln's weights by name and computes the same logits.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/Cnn.h"
#include "bench/Harness.h"
#include "bench/TorchMobileNetV2.h"

namespace kiln::bench {
namespace {

#if KILN_HAVE_LIBTORCH
TEST(CnnPeerTest, SameWeightsGiveTheSameLogits) {
  KilnCnn cnn;
  TorchMobileNetV2 peer(kCnnClasses);
  copyKilnWeights(*cnn.model, *peer);
  int64_t kilnCount = 0, peerCount = 0;
  for (const Tensor& p : cnn.model->parameters()) kilnCount += p.numel();
  for (const torch::Tensor& p : peer->parameters()) peerCount += p.numel();
  EXPECT_EQ(kilnCount, 2236682);  // torchvision's mobilenet_v2(num_classes=10)
  EXPECT_EQ(peerCount, kilnCount);

  // Eval mode: BatchNorm's running statistics and no dropout, so both are deterministic.
  cnn.model->eval();
  peer->eval();
  const Dims shape{2, 3, kCnnSide, kCnnSide};
  std::vector<float> host = hostValues(shape, 3);
  std::vector<float> ours = kilnValues(cnn.model->forward(kilnTensor(host, shape)));
  torch::NoGradGuard noGrad;
  std::vector<float> theirs = torchValues(peer->forward(torchTensor(host, shape)));
  ASSERT_EQ(ours.size(), theirs.size());
  EXPECT_LE(maxAbsDiff(ours, theirs), 1e-4 * maxAbs(theirs));
  EXPECT_GT(maxAbs(theirs), 0.0);
}

TEST(CnnPeerTest, ADifferentNetworkIsNamed) {
  KilnCnn cnn;
  TorchMobileNetV2 fiveClasses(5);
  try {
    copyKilnWeights(*cnn.model, *fiveClasses);
    FAIL() << "copied into a model with another classifier";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()),
              "the LibTorch model has no tensor classifier.1.weight of [10,1280]");
  }
}

TEST(CnnPeerTest, AnotherTensorCountIsSaid) {
  KilnCnn cnn;
  torch::nn::Linear linear(1280, kCnnClasses);
  try {
    copyKilnWeights(*cnn.model, *linear);
    FAIL() << "copied a mobilenet_v2 into a Linear";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("the LibTorch model has 2 tensors where Kiln's has ", 0),
              0u)
        << e.what();
  }
}
#else
TEST(CnnPeerTest, SameWeightsGiveTheSameLogits) { GTEST_SKIP() << "LibTorch not installed"; }
#endif

}  // namespace
}  // namespace kiln::bench

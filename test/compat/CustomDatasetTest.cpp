// A LibTorch program in the style of pytorch/examples cpp/mnist and the custom-dataset
// tutorials, as a LibTorch user writes it: only the include differs. A dataset class
// derives from torch::data::datasets::Dataset, is mapped through Normalize<> and Stack<>
// and loaded with make_data_loader; a small network trains on it, is checkpointed with
// torch::save and restored with torch::load. Exits non-zero unless the loss falls, the
// network learns the classes, and the restored copy predicts the same.
#include "kiln/torch.h"

#include <cstdio>
#include <cstdlib>
#include <string>

// Synthetic MNIST-like digits: 8x8 images of noise in which class k has a bright row 2k.
class SyntheticDigits : public torch::data::datasets::Dataset<SyntheticDigits> {
 public:
  explicit SyntheticDigits(int64_t size) {
    using torch::indexing::Slice;
    images_ = torch::rand({size, 1, 8, 8}) * 0.3;
    labels_ = torch::randint(0, 4, {size});
    for (int64_t k = 0; k < 4; ++k)
      for (int64_t i = 0; i < size; ++i)
        if (labels_[i].item<int64_t>() == k) images_.index_put_({i, 0, 2 * k, Slice()}, 1.0);
  }

  torch::data::Example<> get(size_t index) override {
    return {images_[index], labels_[index]};
  }

  torch::optional<size_t> size() const override {
    return images_.size(0);
  }

 private:
  torch::Tensor images_, labels_;
};

struct Net : torch::nn::Module {
  Net() : fc1(64, 32), fc2(32, 4) {
    register_module("fc1", fc1);
    register_module("fc2", fc2);
  }

  torch::Tensor forward(torch::Tensor x) {
    x = torch::relu(fc1->forward(x.view({-1, 64})));
    return torch::log_softmax(fc2->forward(x), /*dim=*/1);
  }

  torch::nn::Linear fc1;
  torch::nn::Linear fc2;
};

int main() {
  torch::manual_seed(1);

  auto train_dataset = SyntheticDigits(256)
                           .map(torch::data::transforms::Normalize<>(0.5, 0.5))
                           .map(torch::data::transforms::Stack<>());
  const size_t train_dataset_size = train_dataset.size().value();
  auto train_loader = torch::data::make_data_loader(std::move(train_dataset), 32);

  auto model = std::make_shared<Net>();
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.05).momentum(0.5));

  double first_loss = 0, last_loss = 0;
  for (size_t epoch = 1; epoch <= 4; ++epoch) {
    double epoch_loss = 0;
    size_t batches = 0;
    for (auto& batch : *train_loader) {
      optimizer.zero_grad();
      auto output = model->forward(batch.data);
      auto loss = torch::nll_loss(output, batch.target);
      loss.backward();
      optimizer.step();
      epoch_loss += loss.item<double>();
      ++batches;
    }
    epoch_loss /= batches;
    std::printf("epoch %zu: mean loss %.4f\n", epoch, epoch_loss);
    if (epoch == 1) first_loss = epoch_loss;
    last_loss = epoch_loss;
  }

  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string path = std::string(tmp ? tmp : "/tmp") + "/custom_dataset_model.pt";
  torch::save(model, path);
  auto restored = std::make_shared<Net>();
  torch::load(restored, path);

  torch::NoGradGuard no_grad;
  auto test_loader = torch::data::make_data_loader<torch::data::samplers::SequentialSampler>(
      SyntheticDigits(128)
          .map(torch::data::transforms::Normalize<>(0.5, 0.5))
          .map(torch::data::transforms::Stack<>()),
      64);
  int64_t correct = 0, total = 0, agreeing = 0;
  for (const auto& batch : *test_loader) {
    auto prediction = model->forward(batch.data).argmax(1);
    correct += prediction.eq(batch.target).sum().item<int64_t>();
    agreeing += prediction.eq(restored->forward(batch.data).argmax(1)).sum().item<int64_t>();
    total += batch.target.size(0);
  }
  const double accuracy = double(correct) / double(total);
  std::printf("trained on %zu examples; test accuracy %.3f\n", train_dataset_size, accuracy);

  if (!(last_loss < 0.5 * first_loss)) {
    std::fprintf(stderr, "FAIL: the loss fell only from %.4f to %.4f\n", first_loss, last_loss);
    return 1;
  }
  if (accuracy < 0.9) {
    std::fprintf(stderr, "FAIL: test accuracy %.3f\n", accuracy);
    return 1;
  }
  if (agreeing != total) {
    std::fprintf(stderr, "FAIL: the restored model disagrees on %lld of %lld\n",
                 static_cast<long long>(total - agreeing), static_cast<long long>(total));
    return 1;
  }
  std::printf("PASS\n");
  return 0;
}

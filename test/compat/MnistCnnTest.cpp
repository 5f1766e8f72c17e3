// pytorch/examples cpp/mnist, as a LibTorch user writes it, pointed at Fashion-MNIST: a
// CNN with Conv2d, Dropout2d, max_pool2d, dropout, log_softmax and nll_loss, trained with
// make_data_loader over torch::data::datasets::MNIST, then evaluated on the 10,000 test
// images. Only the include differs from a LibTorch program.
//
//   MnistCnnTest [epochs] [accuracy to reach]
//
// Exits non-zero unless the test accuracy reaches the given one. The data lies in
// $FASHION_MNIST_DIR, by default Debian's /usr/share/datasets/fashion-mnist.
#include "kiln/torch.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

struct Net : torch::nn::Module {
  Net()
      : conv1(torch::nn::Conv2dOptions(1, 16, /*kernel_size=*/5)),
        conv2(torch::nn::Conv2dOptions(16, 32, /*kernel_size=*/5)),
        conv2_drop(torch::nn::Dropout2dOptions(0.25)),
        fc1(512, 64),
        fc2(64, 10) {
    register_module("conv1", conv1);
    register_module("conv2", conv2);
    register_module("conv2_drop", conv2_drop);
    register_module("fc1", fc1);
    register_module("fc2", fc2);
  }

  torch::Tensor forward(torch::Tensor x) {
    x = torch::relu(torch::max_pool2d(conv1->forward(x), 2));
    x = torch::relu(torch::max_pool2d(conv2_drop->forward(conv2->forward(x)), 2));
    x = x.view({-1, 512});
    x = torch::relu(fc1->forward(x));
    x = torch::dropout(x, /*p=*/0.5, /*training=*/is_training());
    x = fc2->forward(x);
    return torch::log_softmax(x, /*dim=*/1);
  }

  torch::nn::Conv2d conv1;
  torch::nn::Conv2d conv2;
  torch::nn::Dropout2d conv2_drop;
  torch::nn::Linear fc1;
  torch::nn::Linear fc2;
};

template <typename DataLoader>
void train(size_t epoch, Net& model, DataLoader& data_loader, torch::optim::Optimizer& optimizer,
           size_t dataset_size) {
  model.train();
  size_t batch_idx = 0;
  for (auto& batch : data_loader) {
    optimizer.zero_grad();
    auto output = model.forward(batch.data);
    auto loss = torch::nll_loss(output, batch.target);
    AT_ASSERT(!std::isnan(loss.template item<float>()));
    loss.backward();
    optimizer.step();
    if (batch_idx++ % 200 == 0)
      std::printf("Train Epoch: %zu [%5zu/%5zu] Loss: %.4f\n", epoch, batch_idx * batch.data.size(0),
                  dataset_size, loss.template item<float>());
  }
}

template <typename DataLoader>
double test(Net& model, DataLoader& data_loader, size_t dataset_size) {
  torch::NoGradGuard no_grad;
  model.eval();
  double test_loss = 0;
  int64_t correct = 0;
  for (const auto& batch : data_loader) {
    auto output = model.forward(batch.data);
    test_loss += torch::nll_loss(output, batch.target, /*weight=*/{}, torch::Reduction::Sum)
                     .template item<float>();
    auto pred = output.argmax(1);
    correct += pred.eq(batch.target).sum().template item<int64_t>();
  }
  test_loss /= dataset_size;
  const double accuracy = static_cast<double>(correct) / dataset_size;
  std::printf("Test set: Average loss: %.4f | Accuracy: %.4f\n", test_loss, accuracy);
  return accuracy;
}

int main(int argc, char** argv) {
  const size_t epochs = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 1;
  const double required = argc > 2 ? std::strtod(argv[2], nullptr) : 0.88;
  const char* dir = std::getenv("FASHION_MNIST_DIR");
  const std::string root = dir ? dir : "/usr/share/datasets/fashion-mnist";

  torch::manual_seed(1);
  Net model;

  auto train_dataset = torch::data::datasets::MNIST(root)
                           .map(torch::data::transforms::Normalize<>(0.2860, 0.3530))
                           .map(torch::data::transforms::Stack<>());
  const size_t train_dataset_size = train_dataset.size().value();
  auto train_loader = torch::data::make_data_loader(std::move(train_dataset), 64);

  auto test_dataset = torch::data::datasets::MNIST(
                          root, torch::data::datasets::MNIST::Mode::kTest)
                          .map(torch::data::transforms::Normalize<>(0.2860, 0.3530))
                          .map(torch::data::transforms::Stack<>());
  const size_t test_dataset_size = test_dataset.size().value();
  auto test_loader = torch::data::make_data_loader(std::move(test_dataset), 1000);

  torch::optim::Adam optimizer(model.parameters(), torch::optim::AdamOptions(1e-3));

  const auto start = std::chrono::steady_clock::now();
  double accuracy = 0;
  for (size_t epoch = 1; epoch <= epochs; ++epoch) {
    train(epoch, model, *train_loader, optimizer, train_dataset_size);
    accuracy = test(model, *test_loader, test_dataset_size);
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("%zu epochs on %zu examples in %.0f s: test accuracy %.4f (required %.4f)\n", epochs,
              train_dataset_size, seconds, accuracy, required);
  if (accuracy < required) {
    std::fprintf(stderr, "FAIL: test accuracy %.4f is below %.4f\n", accuracy, required);
    return 1;
  }
  std::printf("PASS\n");
  return 0;
}

// pytorch/examples cpp/dcgan, as a LibTorch user writes it, with only the include changed:
// a ConvTranspose2d + BatchNorm2d generator, a Conv2d + BatchNorm2d + LeakyReLU
// discriminator in nn::Sequential, binary_cross_entropy losses with label smoothing and
// two Adam optimizers. It trains a few steps on synthetic 28x28 "images" (a bright disc
// at a random place, scaled to [-1, 1]) and exits non-zero unless every loss is finite and
// the generator's samples are [N, 1, 28, 28] inside tanh's range.
#include "kiln/torch.h"

#include <cmath>
#include <cstdio>

const int64_t kNoiseSize = 100;
const int64_t kBatchSize = 16;
const int64_t kNumberOfSteps = 6;

struct DCGANGeneratorImpl : torch::nn::Module {
  DCGANGeneratorImpl(int kNoiseSize)
      : conv1(torch::nn::ConvTranspose2dOptions(kNoiseSize, 256, 4).bias(false)),
        batch_norm1(256),
        conv2(torch::nn::ConvTranspose2dOptions(256, 128, 3).stride(2).padding(1).bias(false)),
        batch_norm2(128),
        conv3(torch::nn::ConvTranspose2dOptions(128, 64, 4).stride(2).padding(1).bias(false)),
        batch_norm3(64),
        conv4(torch::nn::ConvTranspose2dOptions(64, 1, 4).stride(2).padding(1).bias(false)) {
    register_module("conv1", conv1);
    register_module("conv2", conv2);
    register_module("conv3", conv3);
    register_module("conv4", conv4);
    register_module("batch_norm1", batch_norm1);
    register_module("batch_norm2", batch_norm2);
    register_module("batch_norm3", batch_norm3);
  }

  torch::Tensor forward(torch::Tensor x) {
    x = torch::relu(batch_norm1(conv1(x)));
    x = torch::relu(batch_norm2(conv2(x)));
    x = torch::relu(batch_norm3(conv3(x)));
    x = torch::tanh(conv4(x));
    return x;
  }

  torch::nn::ConvTranspose2d conv1, conv2, conv3, conv4;
  torch::nn::BatchNorm2d batch_norm1, batch_norm2, batch_norm3;
};

TORCH_MODULE(DCGANGenerator);

// Real images: a disc of radius 5 at a random centre, 1 inside and -1 outside.
torch::Tensor real_batch(int64_t n) {
  auto coords = torch::arange(0, 28, 1, torch::kFloat).view({1, 1, 28, 1});
  auto rows = coords, cols = coords.view({1, 1, 1, 28});
  auto cy = torch::randint(8, 20, {n, 1, 1, 1}).to(torch::kFloat);
  auto cx = torch::randint(8, 20, {n, 1, 1, 1}).to(torch::kFloat);
  auto inside = ((rows - cy).pow(2) + (cols - cx).pow(2)).lt(25.0);
  return inside.to(torch::kFloat) * 2.0 - 1.0;
}

int main() {
  torch::manual_seed(1);
  torch::Device device(torch::kCPU);

  DCGANGenerator generator(kNoiseSize);
  generator->to(device);

  torch::nn::Sequential discriminator(
      // Layer 1
      torch::nn::Conv2d(torch::nn::Conv2dOptions(1, 64, 4).stride(2).padding(1).bias(false)),
      torch::nn::LeakyReLU(torch::nn::LeakyReLUOptions().negative_slope(0.2)),
      // Layer 2
      torch::nn::Conv2d(torch::nn::Conv2dOptions(64, 128, 4).stride(2).padding(1).bias(false)),
      torch::nn::BatchNorm2d(128),
      torch::nn::LeakyReLU(torch::nn::LeakyReLUOptions().negative_slope(0.2)),
      // Layer 3
      torch::nn::Conv2d(torch::nn::Conv2dOptions(128, 256, 4).stride(2).padding(1).bias(false)),
      torch::nn::BatchNorm2d(256),
      torch::nn::LeakyReLU(torch::nn::LeakyReLUOptions().negative_slope(0.2)),
      // Layer 4
      torch::nn::Conv2d(torch::nn::Conv2dOptions(256, 1, 3).stride(1).padding(0).bias(false)),
      torch::nn::Sigmoid());
  discriminator->to(device);

  torch::optim::Adam generator_optimizer(
      generator->parameters(), torch::optim::AdamOptions(2e-4).betas(std::make_tuple(0.5, 0.5)));
  torch::optim::Adam discriminator_optimizer(
      discriminator->parameters(), torch::optim::AdamOptions(2e-4).betas(std::make_tuple(0.5, 0.5)));

  bool finite = true;
  for (int64_t step = 1; step <= kNumberOfSteps; ++step) {
    // Train discriminator with real images.
    discriminator->zero_grad();
    torch::Tensor real_images = real_batch(kBatchSize).to(device);
    torch::Tensor real_labels = torch::empty({kBatchSize}, device).uniform_(0.8, 1.0);
    torch::Tensor real_output = discriminator->forward(real_images).reshape(real_labels.sizes());
    torch::Tensor d_loss_real = torch::binary_cross_entropy(real_output, real_labels);
    d_loss_real.backward();

    // Train discriminator with fake images.
    torch::Tensor noise = torch::randn({kBatchSize, kNoiseSize, 1, 1}, device);
    torch::Tensor fake_images = generator->forward(noise);
    torch::Tensor fake_labels = torch::zeros({kBatchSize}, device);
    torch::Tensor fake_output = discriminator->forward(fake_images.detach()).reshape(fake_labels.sizes());
    torch::Tensor d_loss_fake = torch::binary_cross_entropy(fake_output, fake_labels);
    d_loss_fake.backward();

    torch::Tensor d_loss = d_loss_real + d_loss_fake;
    discriminator_optimizer.step();

    // Train generator.
    generator->zero_grad();
    fake_labels.fill_(1);
    fake_output = discriminator->forward(fake_images).reshape(fake_labels.sizes());
    torch::Tensor g_loss = torch::binary_cross_entropy(fake_output, fake_labels);
    g_loss.backward();
    generator_optimizer.step();

    std::printf("[%2lld/%2lld] D_loss: %.4f | G_loss: %.4f\n", static_cast<long long>(step),
                static_cast<long long>(kNumberOfSteps), d_loss.item<float>(), g_loss.item<float>());
    finite = finite && std::isfinite(d_loss.item<float>()) && std::isfinite(g_loss.item<float>());
  }

  generator->eval();
  torch::NoGradGuard no_grad;
  torch::Tensor samples = generator->forward(torch::randn({8, kNoiseSize, 1, 1}, device));
  const float low = samples.min().item<float>(), high = samples.max().item<float>();
  std::printf("samples of shape [%lld, %lld, %lld, %lld] in [%.3f, %.3f]\n",
              static_cast<long long>(samples.size(0)), static_cast<long long>(samples.size(1)),
              static_cast<long long>(samples.size(2)), static_cast<long long>(samples.size(3)), low, high);

  if (!finite) {
    std::fprintf(stderr, "FAIL: a loss is not finite\n");
    return 1;
  }
  if (samples.sizes() != std::vector<int64_t>{8, 1, 28, 28}) {
    std::fprintf(stderr, "FAIL: the generator's samples are not [8, 1, 28, 28]\n");
    return 1;
  }
  if (!(low >= -1.0f && high <= 1.0f && high > low)) {
    std::fprintf(stderr, "FAIL: samples in [%f, %f], not a spread inside [-1, 1]\n", low, high);
    return 1;
  }
  std::printf("PASS\n");
  return 0;
}

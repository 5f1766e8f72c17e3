// make-traced-model DIR: the in-process side of kiln-run's round-trip test. Traces a small
// classifier with capture_as_const, dumps it as DIR/model.mlirbc and DIR/model.mlir
// (inputs x, shift; outputs logits, probs), and writes its inputs (DIR/x.npy,
// DIR/shift.npy) and the trace's own outputs for them (DIR/expected/<name>.npy), which
// kiln-run must reproduce byte for byte.
#include <filesystem>
#include <iostream>
#include <string>
#include <tuple>

#include "kiln/core/Functional.h"
#include "kiln/core/Ops.h"
#include "kiln/core/Random.h"
#include "kiln/io/Npy.h"
#include "kiln/jit/Trace.h"
#include "kiln/nn/Activation.h"
#include "kiln/nn/Linear.h"
#include "kiln/nn/Sequential.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: make-traced-model DIR\n";
    return 2;
  }
  namespace fs = std::filesystem;
  using namespace kiln;
  const fs::path dir = argv[1];
  try {
    fs::create_directories(dir / "expected");
    manual_seed(0);
    nn::Sequential body(nn::Linear(4, 16), nn::ReLU(), nn::Linear(16, 3));
    auto classify = [&](const Tensor& x, const Tensor& shift) {
      Tensor logits = add(body->forward(x), shift);
      return std::make_tuple(logits, softmax(logits, 1));
    };
    auto traced = jit::trace(classify, {.capture_as_const = true});
    Tensor x = randn({5, 4}), shift = randn({3});
    traced(x, shift);                         // records (and runs eagerly)
    auto [logits, probs] = traced(x, shift);  // runs the recording, as kiln-run will
    jit::DumpOptions options{.input_names = {"x", "shift"}, .output_names = {"logits", "probs"}};
    traced.dump(dir / "model.mlirbc", options);
    options.format = jit::DumpOptions::Format::Text;
    traced.dump(dir / "model.mlir", options);
    io::save_npy(x, dir / "x.npy");
    io::save_npy(shift, dir / "shift.npy");
    io::save_npy(logits, dir / "expected" / "logits.npy");
    io::save_npy(probs, dir / "expected" / "probs.npy");
  } catch (const std::exception& e) {
    std::cerr << "make-traced-model: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

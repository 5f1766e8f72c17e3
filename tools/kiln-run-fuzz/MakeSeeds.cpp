// make-seeds DIR: the seed corpora of kiln-run-fuzz. DIR/dump gets small traced programs
// dumped by jit::dump as bytecode (.mlirbc) and text (.mlir), covering float, integer and
// bool dtypes, reductions, matmul, indexing and a graph with dynamic dims; DIR/npy gets
// .npy files written by io::save_npy (each dtype, a scalar, an empty array) and by hand
// (Fortran order, format versions 2.0 and 3.0, big-endian data).
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <tuple>

#include "kiln/core/Functional.h"
#include "kiln/core/Ops.h"
#include "kiln/core/Random.h"
#include "kiln/io/Npy.h"
#include "kiln/jit/Trace.h"

namespace {

namespace fs = std::filesystem;
using namespace kiln;
using Format = jit::DumpOptions::Format;

void writeBytes(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
  if (!out.flush()) throw std::runtime_error("cannot write " + path.string());
}

// Records `fn` on `args` and dumps it as DIR/<name>.mlirbc and DIR/<name>.mlir.
template <class Fn, class... Args>
void dumpBoth(const fs::path& dir, const std::string& name, Fn fn, jit::DumpOptions options,
              const Args&... args) {
  auto traced = jit::trace(fn, {.capture_as_const = true});
  traced(args...);
  options.format = Format::Bytecode;
  traced.dump(dir / (name + ".mlirbc"), options);
  options.format = Format::Text;
  traced.dump(dir / (name + ".mlir"), options);
}

void writeDumps(const fs::path& dir) {
  manual_seed(0);
  const Tensor w1 = randn({4, 8}), b1 = randn({8}), w2 = randn({8, 3});
  dumpBoth(
      dir, "classifier",
      [&](const Tensor& x, const Tensor& shift) {
        Tensor logits = add(matmul(relu(add(matmul(x, w1), b1)), w2), shift);
        return std::make_tuple(logits, softmax(logits, 1));
      },
      {.input_names = {"x", "shift"}, .output_names = {"logits", "probs"}}, randn({5, 4}),
      randn({3}));
  dumpBoth(
      dir, "reduce",
      [](const Tensor& x, const Tensor& y) {
        Tensor e = mul(exp(x), y);
        return std::make_tuple(sum(e, {1}), amax(x, {0}, true), mean(tanh(x)));
      },
      {}, randn({3, 4}), randn({4}));
  dumpBoth(
      dir, "integers",
      [](const Tensor& a, const Tensor& b) {
        Tensor wide = b.to(kInt64);
        return std::make_tuple(where(gt(a, wide), a, mul(wide, 2)), lt(a, wide));
      },
      {}, randint(0, 9, {5}), randint(0, 9, {5}, kInt32));
  const Tensor table = randn({6, 4});
  dumpBoth(
      dir, "indexing",
      [&](const Tensor& index, const Tensor& x) {
        Tensor rows = embedding(table, index);
        return cat({rows, x.transpose(0, 1).reshape({2, 4})}, 0);
      },
      {}, randint(0, 6, {3}), randn({4, 2}));
  dumpBoth(
      dir, "float64", [](const Tensor& x) { return layer_norm(add(mul(x, x), 1.0), {4}); }, {},
      randn({2, 4}, kFloat64));
  // The tracer records static shapes; a graph with dynamic dims is written by hand, as
  // kiln-opt would print it.
  writeBytes(dir / "dynamic.mlir",
             "func.func @main(%x: tensor<?x2xf32> {kiln.input = 0 : i64}) -> "
             "(tensor<?x2xf32> {kiln.output = 0 : i64}) {\n"
             "  %y = kiln.neg %x : tensor<?x2xf32>\n"
             "  return %y : tensor<?x2xf32>\n"
             "}\n");
}

// An .npy file as numpy writes one: magic, version, little-endian header length, the dict
// padded with spaces and '\n' to a multiple of 64 bytes, then the data.
std::string npyBytes(int major, const std::string& dict, const std::string& data) {
  const size_t lengthBytes = major == 1 ? 2 : 4;
  const size_t unpadded = 6 + 2 + lengthBytes + dict.size() + 1;
  const size_t header = dict.size() + (64 - unpadded % 64) + 1;
  std::string out = "\x93NUMPY";
  out += char(major);
  out += char(0);
  for (size_t i = 0; i < lengthBytes; ++i) out += char((header >> (8 * i)) & 0xFF);
  out += dict + std::string(header - dict.size() - 1, ' ') + "\n";
  return out + data;
}

// The bytes of `t` (contiguous) as they lie in memory.
std::string rawBytes(const Tensor& t) {
  return std::string(static_cast<const char*>(t.rawData()), size_t(t.numel()) * t.element_size());
}

void writeNpys(const fs::path& dir) {
  const Tensor values = arange(6).reshape({2, 3});
  io::save_npy(values.to(kFloat32), dir / "float32.npy");
  io::save_npy(values.to(kFloat64).reshape({6}), dir / "float64.npy");
  io::save_npy(values.to(kFloat16).reshape({3, 1, 2}), dir / "float16.npy");
  io::save_npy(values.to(kInt32), dir / "int32.npy");
  io::save_npy(full({}, 7).to(kInt64), dir / "int64-scalar.npy");
  io::save_npy(gt(values, 2), dir / "bool.npy");
  io::save_npy(zeros({0, 3}), dir / "empty.npy");
  // Column-major [2, 3]: the stored bytes are the C-order [3, 2] transpose.
  writeBytes(dir / "fortran.npy",
             npyBytes(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }",
                      rawBytes(values.to(kFloat32).transpose(0, 1).contiguous())));
  writeBytes(dir / "version2.npy",
             npyBytes(2, "{'descr': '<i8', 'fortran_order': False, 'shape': (3,), }",
                      rawBytes(arange(3).to(kInt64))));
  writeBytes(dir / "version3.npy",
             npyBytes(3, "{\"descr\": \"<f8\", \"fortran_order\": False, \"shape\": (2,), }",
                      rawBytes(arange(2).to(kFloat64))));
  writeBytes(dir / "big-endian.npy",
             npyBytes(1, "{'descr': '>i4', 'fortran_order': False, 'shape': (2,), }",
                      std::string("\0\0\0\1\0\0\1\0", 8)));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: make-seeds DIR  (writes DIR/dump and DIR/npy)\n";
    return 2;
  }
  try {
    const fs::path dir = argv[1];
    fs::create_directories(dir / "dump");
    fs::create_directories(dir / "npy");
    writeDumps(dir / "dump");
    writeNpys(dir / "npy");
  } catch (const std::exception& e) {
    std::cerr << "make-seeds: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

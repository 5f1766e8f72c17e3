// A whole kiln-run on a mutated dump: the graph loaded as a user runs it (KILN_JIT_BACKEND
// unset: compiled for the CPU, interpreted where it has dynamic dims), given inputs of its
// signature as .npy files, run, and its outputs written. Slow: every input compiles.
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <iostream>
#include <string>
#include <vector>

#include "frontend/jit/Context.h"
#include "frontend/jit/Dump.h"
#include "bridge/OpBridge.h"
#include "kiln/core/Ops.h"
#include "kiln/core/Random.h"
#include "kiln/io/Npy.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Parser/Parser.h"
#include "tools/kiln-run-fuzz/FuzzTarget.h"
#include "tools/kiln-run/KilnRun.h"

namespace {

// Inputs larger than this are left out (kiln-run then names the missing input): the
// fuzzer looks for faults, not for the allocator's limit.
constexpr int64_t kMaxInputElements = int64_t(1) << 20;
// The size given to a dynamic dim.
constexpr int64_t kDynamicSize = 3;

// The argument types of the file's first func.func, as far as they are tensors Kiln
// knows; none when the file does not parse (kiln-run then says why).
std::vector<kiln::TensorMeta> signatureOf(const std::string& path) {
  std::vector<kiln::TensorMeta> metas;
  {  // only what jit::load would hand to MLIR's reader (bytecode it can check, or text)
    std::ifstream file(path, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    std::string producer;
    const kiln::jit::BytecodeCheck check = kiln::jit::checkBytecode(bytes, producer);
    if (check != kiln::jit::BytecodeCheck::NotBytecode && check != kiln::jit::BytecodeCheck::Verified)
      return metas;
  }
  std::unique_ptr<mlir::MLIRContext> context = kiln::jit::makeContext();
  mlir::ScopedDiagnosticHandler quiet(context.get(),
                                      [](mlir::Diagnostic&) { return mlir::success(); });
  mlir::ParserConfig config(context.get());
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::parseSourceFile<mlir::ModuleOp>(path, config);
  if (!module) return metas;
  for (mlir::func::FuncOp func : module->getOps<mlir::func::FuncOp>()) {
    for (mlir::Type type : func.getArgumentTypes()) {
      try {
        metas.push_back(kiln::bridge::metaFor(type));
      } catch (const kiln::Error&) {
        break;
      }
    }
    break;
  }
  return metas;
}

// Writes an input of `meta` (dynamic dims of kDynamicSize) to `path`; false when it is too
// large or has no .npy dtype. Integers are 0 and 1, so index inputs are mostly in range.
bool writeInput(kiln::TensorMeta meta, const std::string& path) {
  int64_t elements = 1;
  for (int64_t& size : meta.shape) {
    if (size == mlir::ShapedType::kDynamic) size = kDynamicSize;
    if (size > kMaxInputElements) return false;
    elements *= size;
    if (elements > kMaxInputElements) return false;
  }
  kiln::Tensor values = kiln::isFloatingPoint(meta.dtype)
                            ? kiln::randn(meta.shape)
                            : kiln::randint(0, 2, meta.shape);
  bool written = false;
  kiln::fuzz::ignoringKilnErrors([&] {
    kiln::io::save_npy(values.to(meta.dtype), path);
    written = true;
  });
  return written;
}

// How far the executions got, printed at exit: most mutated dumps are refused before
// they compile, and the log should say how many ran.
struct Outcomes {
  int64_t ran = 0, refused = 0;
  ~Outcomes() {
    std::cerr << "kiln-run-fuzz: " << ran + refused << " kiln-run executions: " << ran
              << " ran the graph and wrote its outputs (exit 0), " << refused
              << " reported a mistake (exit 2)\n";
  }
};
Outcomes outcomes;

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  unsetenv("KILN_JIT_BACKEND");
  setenv("KILN_CACHE_DIR", "off", 1);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const kiln::fuzz::ScratchDir& dir = kiln::fuzz::scratch();
  std::vector<std::string> args = {"kiln-run", dir.write("model", data, size)};
  kiln::manual_seed(0);
  const std::vector<kiln::TensorMeta> inputs = signatureOf(args[1]);
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::string path = (dir.path() / ("input" + std::to_string(i) + ".npy")).string();
    if (!writeInput(inputs[i], path)) break;
    args.push_back(path);
  }
  args.push_back("--output-dir");
  args.push_back((dir.path() / "out").string());
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  // 0: ran; 2: a mistake in the file, reported. 1 is an exception that is no kiln::Error.
  const int code = kiln::tools::kilnRun(int(args.size()), argv.data());
  if (code == 1) {
    std::cerr << "kiln-run-fuzz: kiln-run failed with an exception that is not a kiln::Error "
                 "(its message is above)\n";
    std::abort();
  }
  ++(code == 0 ? outcomes.ran : outcomes.refused);
  return 0;
}

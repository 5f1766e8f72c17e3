// Halide's runtime under Kiln's kernels (see HalideRuntime.h): handlers, the standalone
// runtime object, and linking kernel objects beside it.
#include "runtime/halide/HalideRuntime.h"

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>

#include "kiln/core/Error.h"
#include "kiln/core/ThreadPool.h"
#include "runtime/halide/HalideKernels.h"

namespace kiln::runtime::halide {

namespace {

constexpr const char* kLinking = "link HALIDE kernel";
// Bumped when what is stored for the runtime changes.
constexpr std::string_view kRuntimeFormat = "kiln-halide-runtime/1";

// Errors keep their message for HalideKernel::run to raise as a kiln::Error. `Context` is
// JITUserContext for Halide's JIT runtime and void for the standalone one.
template <class Context>
void recordError(Context*, const char* message) {
  lastError() = message;
}

// Halide's parallel loops run on Kiln's pool, so KILN_NUM_THREADS bounds them as it bounds
// the eager kernels and MLIR's kernels.
template <class Context>
int parallelFor(Context* context, int (*task)(Context*, int, uint8_t*), int min, int extent,
                uint8_t* closure) {
  std::atomic<int> status{0};
  kiln::parallelFor(min, int64_t(min) + extent, 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      if (int s = task(context, int(i), closure)) status = s;
  });
  return status;
}

void installJitHandlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    Halide::JITHandlers handlers;
    handlers.custom_error = recordError<Halide::JITUserContext>;
    handlers.custom_do_par_for = parallelFor<Halide::JITUserContext>;
    Halide::Internal::JITSharedRuntime::set_default_handlers(handlers);
  });
}

// What `emit` writes to a file path, as bytes: Halide's compilers write files only.
template <class Emit>
std::string emitted(Emit emit) {
  static std::atomic<int64_t> serial{0};
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() /
      ("kiln-halide-" + std::to_string(::getpid()) + "-" + std::to_string(serial++) + ".o");
  struct Remove {
    const std::filesystem::path& path;
    ~Remove() {
      std::error_code ignored;
      std::filesystem::remove(path, ignored);
    }
  } remove{path};
  emit(path.string());
  std::ifstream file(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
}

std::atomic<int64_t> runtimes{0};
std::mutex runtimeMutex;
std::shared_ptr<const JitEngine> processRuntime;

// Halide's standalone runtime for cpuTarget(), linked, with Kiln's handlers set: from
// `cache` where it is there (compiling it takes Halide over a second), else compiled and
// stored.
std::shared_ptr<const JitEngine> standaloneRuntime(const DiskCache& cache) {
  std::lock_guard lock(runtimeMutex);
  if (processRuntime) return processRuntime;
  const std::string key =
      cache.enabled() ? DiskCache::keyOf({kRuntimeFormat, compilerIdentity()}) : "";
  std::optional<CacheEntry> entry = cache.load(key);
  if (!entry || entry->module != kRuntimeFormat) {
    entry = CacheEntry{std::string(kRuntimeFormat), emitted([](const std::string& path) {
                         Halide::compile_standalone_runtime(
                             path, cpuTarget().with_feature(Halide::Target::NoRuntime));
                       })};
    ++runtimes;
    cache.store(key, *entry);
  }
  auto engine = JitEngine::link(entry->object, {}, kLinking, SourceLoc::current());
  using SetParFor = halide_do_par_for_t (*)(halide_do_par_for_t);
  using SetError = halide_error_handler_t (*)(halide_error_handler_t);
  reinterpret_cast<SetParFor>(engine->lookup("halide_set_custom_do_par_for"))(parallelFor<void>);
  reinterpret_cast<SetError>(engine->lookup("halide_set_error_handler"))(recordError<void>);
  processRuntime = std::move(engine);
  return processRuntime;
}

}  // namespace

std::string& lastError() {
  thread_local std::string message;
  return message;
}

// Less AVX512_SapphireRapids: Halide infers it from AVX512-BF16 and VNNI, which AMD Zen 4
// has, and then emits AVX512-FP16 instructions Zen 4 lacks (float16 kernels died of SIGILL
// there). StrictFloat: IEEE semantics, as the eager kernels have them; without it Halide
// gives LLVM fast-math flags and the NaN checks of max, min and clamp fold away (clamp(NaN)
// came out 0.5; HalideParityTest's clamp case).
const Halide::Target& cpuTarget() {
  static const Halide::Target target =
      Halide::get_jit_target_from_environment()
          .without_feature(Halide::Target::AVX512_SapphireRapids)
          .with_feature(Halide::Target::StrictFloat);
  return target;
}

std::string compilerIdentity() {
  return DiskCache::fileIdentityOf(reinterpret_cast<const void*>(&Halide::get_host_target)) + "|" +
         DiskCache::fileIdentityOf(reinterpret_cast<const void*>(&halideKernels)) + "|" +
         cpuTarget().to_string();
}

KernelCode jitCode(const Halide::Module& module, const std::string& function) {
  installJitHandlers();
  KernelCode code;
  code.jit.emplace(module, module.get_function_by_name(function), std::vector<Halide::Internal::JITModule>{});
  code.entry = code.jit->argv_function();
  return code;
}

std::string objectOf(const Halide::Module& module) {
  return emitted([&](const std::string& path) {
    module.compile({{Halide::OutputFileType::object, path}});
  });
}

KernelCode objectCode(std::string_view object, const std::string& function, const DiskCache& cache) {
  KernelCode code;
  code.runtime = standaloneRuntime(cache);
  RuntimeSymbols symbols;
  for (const std::string& name : JitEngine::undefinedSymbols(object, kLinking, SourceLoc::current()))
    if (void* address = code.runtime->find(name)) symbols.emplace_back(name, address);
  code.object = JitEngine::link(object, symbols, kLinking, SourceLoc::current());
  code.entry = reinterpret_cast<int (*)(const void**)>(code.object->lookup(function + "_argv"));
  return code;
}

int64_t runtimesCompiled() { return runtimes; }

void forgetStandaloneRuntime() {
  std::lock_guard lock(runtimeMutex);
  processRuntime.reset();
}

}  // namespace kiln::runtime::halide

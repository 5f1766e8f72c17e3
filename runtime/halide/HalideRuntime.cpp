// Halide's runtime under Kiln's kernels (see HalideRuntime.h): handlers, the standalone
// runtime object, and linking kernel objects beside it.
#include "runtime/halide/HalideRuntime.h"

#include <HalideRuntimeCuda.h>
#include <dlfcn.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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

bool traceCuda();

std::atomic<int64_t> runtimes{0};
std::mutex runtimeMutex;
// The process's standalone runtimes, by RuntimeTarget.
std::array<std::shared_ptr<const JitEngine>, 2> processRuntimes;

// The context and stream Halide's CUDA runtime is given (CudaScope).
thread_local void* cudaContext = nullptr;
thread_local void* cudaStream = nullptr;

// Outside a kernel's run only a release asks (create false: Halide's exit-time cleanup),
// and there is nothing of Halide's to release: the context is Kiln's.
int acquireCudaContext(void*, void** context, bool create) {
  if (!cudaContext && !create) {
    *context = nullptr;
    return 0;
  }
  if (!cudaContext) {
    lastError() = "Halide's CUDA runtime was called outside a Kiln CUDA kernel's run";
    return halide_error_code_device_interface_no_device;
  }
  *context = cudaContext;
  return 0;
}
int releaseCudaContext(void*) { return 0; }
int cudaStreamOf(void*, void*, void** stream) {
  *stream = cudaStream;
  return 0;
}

// Halide's CUDA runtime opens "libcuda.so", which a driver installation need not have (only
// libcuda.so.1, which Kiln's driver opens: frontend/core/cuda/Driver.cpp); both name the
// same library, so the process holds it once.
void* loadLibrary(const char* name) {
  if (std::strcmp(name, "libcuda.so") == 0) name = "libcuda.so.1";
  return ::dlopen(name, RTLD_LAZY | RTLD_LOCAL);
}

template <class Setter, class Handler>
void setHandler(const JitEngine& engine, const char* setter, Handler handler) {
  reinterpret_cast<Setter>(engine.lookup(setter))(handler);
}

// Halide's standalone runtime for `target`, linked, with Kiln's handlers set: from `cache`
// where it is there (compiling it takes Halide over a second), else compiled and stored.
std::shared_ptr<const JitEngine> standaloneRuntime(const DiskCache& cache, RuntimeTarget target) {
  std::lock_guard lock(runtimeMutex);
  std::shared_ptr<const JitEngine>& process = processRuntimes[size_t(target)];
  if (process) return process;
  // Traced, the CUDA runtime is Halide's debug build too, which prints each of its steps.
  const Halide::Target halideTarget = target == RuntimeTarget::Cpu ? cpuTarget()
                                      : traceCuda()                ? cudaTarget().with_feature(Halide::Target::Debug)
                                                                   : cudaTarget();
  const std::string key =
      cache.enabled() ? DiskCache::keyOf({kRuntimeFormat, compilerIdentity(), halideTarget.to_string()}) : "";
  std::optional<CacheEntry> entry = cache.load(key);
  if (!entry || entry->module != kRuntimeFormat) {
    entry = CacheEntry{std::string(kRuntimeFormat), emitted([&](const std::string& path) {
                         Halide::compile_standalone_runtime(
                             path, halideTarget.with_feature(Halide::Target::NoRuntime));
                       })};
    ++runtimes;
    cache.store(key, *entry);
  }
  auto engine = JitEngine::link(entry->object, {}, kLinking, SourceLoc::current());
  setHandler<halide_do_par_for_t (*)(halide_do_par_for_t)>(*engine, "halide_set_custom_do_par_for",
                                                           parallelFor<void>);
  setHandler<halide_error_handler_t (*)(halide_error_handler_t)>(*engine, "halide_set_error_handler",
                                                                 recordError<void>);
  if (target == RuntimeTarget::Cuda) {
    setHandler<halide_load_library_t (*)(halide_load_library_t)>(*engine, "halide_set_custom_load_library",
                                                                 loadLibrary);
    setHandler<halide_cuda_acquire_context_t (*)(halide_cuda_acquire_context_t)>(
        *engine, "halide_set_cuda_acquire_context", acquireCudaContext);
    setHandler<halide_cuda_release_context_t (*)(halide_cuda_release_context_t)>(
        *engine, "halide_set_cuda_release_context", releaseCudaContext);
    setHandler<halide_cuda_get_stream_t (*)(halide_cuda_get_stream_t)>(*engine, "halide_set_cuda_get_stream",
                                                                       cudaStreamOf);
    // A buffer Halide allocates on the device inside a pipeline (a reduction computed at
    // the root) is kept for the next call: cuMemFree would wait for the whole device.
    reinterpret_cast<int (*)(void*, bool)>(engine->lookup("halide_reuse_device_allocations"))(nullptr, true);
  }
  process = std::move(engine);
  return process;
}

// KILN_HALIDE_TRACE_CUDA (set, not "" or "0"): a kernel object's calls into Halide's CUDA
// runtime that load its PTX and launch it are logged to stderr with the module state (the
// id Halide's compilation cache files the loaded module under) and the context Kiln gave,
// and the CUDA runtime is Halide's debug build, which prints each of its own steps.
// A diagnostic for a GPU machine (docs/GPU.md): it traces objects linked to the process's
// first CUDA runtime only (a later one, after forgetStandaloneRuntime, is not traced).
bool traceCuda() {
  static const bool on = [] {
    const char* value = std::getenv("KILN_HALIDE_TRACE_CUDA");
    return value && *value && std::string_view(value) != "0";
  }();
  return on;
}

using InitializeKernels = int (*)(void*, void**, const char*, int);
using RunKernel = int (*)(void*, void*, const char*, int, int, int, int, int, int, int, size_t*, void**, int8_t*);
// The traced runtime and its two functions, set once under the mutex before any traced
// object is linked (so before any wrapper runs).
std::mutex traceMutex;
const JitEngine* tracedRuntime = nullptr;
InitializeKernels realInitialize = nullptr;
RunKernel realRun = nullptr;

int tracedInitialize(void* user, void** state, const char* ptx, int size) {
  void* before = *state;
  const int status = realInitialize(user, state, ptx, size);
  std::fprintf(stderr,
               "kiln: halide_cuda_initialize_kernels(state at %p: %p -> %p, %d bytes of PTX) in context %p: %d%s%s\n",
               static_cast<void*>(state), before, *state, size, cudaContext, status, status ? ": " : "",
               status ? lastError().c_str() : "");
  return status;
}

int tracedRun(void* user, void* state, const char* entry, int blocksX, int blocksY, int blocksZ, int threadsX,
              int threadsY, int threadsZ, int shared, size_t* sizes, void** args, int8_t* isBuffer) {
  std::fprintf(stderr, "kiln: halide_cuda_run(state %p, %s, blocks %dx%dx%d, threads %dx%dx%d, %d bytes shared) in context %p\n",
               state, entry, blocksX, blocksY, blocksZ, threadsX, threadsY, threadsZ, shared, cudaContext);
  const int status = realRun(user, state, entry, blocksX, blocksY, blocksZ, threadsX, threadsY, threadsZ, shared,
                             sizes, args, isBuffer);
  if (status) std::fprintf(stderr, "kiln: halide_cuda_run: %d: %s\n", status, lastError().c_str());
  return status;
}

// Where tracing is on and `runtime` is the first CUDA runtime traced, the object's calls
// that load and launch device code go through the logging wrappers above.
void traceCudaCalls(const JitEngine& runtime, RuntimeSymbols& symbols) {
  {
    std::lock_guard lock(traceMutex);
    if (!tracedRuntime) {
      realInitialize = reinterpret_cast<InitializeKernels>(runtime.lookup("halide_cuda_initialize_kernels"));
      realRun = reinterpret_cast<RunKernel>(runtime.lookup("halide_cuda_run"));
      tracedRuntime = &runtime;
    }
    if (tracedRuntime != &runtime) return;
  }
  for (auto& [name, address] : symbols) {
    if (name == "halide_cuda_initialize_kernels") address = reinterpret_cast<void*>(&tracedInitialize);
    if (name == "halide_cuda_run") address = reinterpret_cast<void*>(&tracedRun);
  }
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

// Compute capability 8.0, Halide 14's highest but 8.6: its PTX says .target sm_80, which
// ptxas assembles for sm_80 and, forward, for sm_90 (sm_86's would not assemble for sm_80).
const Halide::Target& cudaTarget() {
  static const Halide::Target target =
      cpuTarget().with_feature(Halide::Target::CUDA).with_feature(Halide::Target::CUDACapability80);
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

KernelCode objectCode(std::string_view object, const std::string& function, const DiskCache& cache,
                      RuntimeTarget target) {
  KernelCode code;
  code.runtime = standaloneRuntime(cache, target);
  RuntimeSymbols symbols;
  for (const std::string& name : JitEngine::undefinedSymbols(object, kLinking, SourceLoc::current()))
    if (void* address = code.runtime->find(name)) symbols.emplace_back(name, address);
  if (target == RuntimeTarget::Cuda && traceCuda()) traceCudaCalls(*code.runtime, symbols);
  code.object = JitEngine::link(object, symbols, kLinking, SourceLoc::current());
  code.entry = reinterpret_cast<int (*)(const void**)>(code.object->lookup(function + "_argv"));
  return code;
}

const halide_device_interface_t* cudaInterface(const KernelCode& code) {
  using Interface = const halide_device_interface_t* (*)();
  return reinterpret_cast<Interface>(code.runtime->lookup("halide_cuda_device_interface"))();
}

CudaScope::CudaScope(void* context, void* stream) : previousContext_(cudaContext), previousStream_(cudaStream) {
  cudaContext = context;
  cudaStream = stream;
}

CudaScope::~CudaScope() {
  cudaContext = previousContext_;
  cudaStream = previousStream_;
}

int64_t runtimesCompiled() { return runtimes; }

void forgetStandaloneRuntime() {
  std::lock_guard lock(runtimeMutex);
  for (std::shared_ptr<const JitEngine>& runtime : processRuntimes) runtime.reset();
}

}  // namespace kiln::runtime::halide

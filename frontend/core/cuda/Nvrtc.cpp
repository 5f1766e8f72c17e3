// NVRTC loaded with dlopen, the kernel cache and launches (see Nvrtc.h).
#include "frontend/core/cuda/Nvrtc.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <unordered_map>
#include <mutex>
#include <vector>

namespace kiln::cuda {

namespace {

using nvrtcResult = int;
using nvrtcProgram = struct _nvrtcProgram*;

struct NvrtcApi {
  std::string reason;
  const char* (*nvrtcGetErrorString)(nvrtcResult);
  nvrtcResult (*nvrtcVersion)(int*, int*);
  nvrtcResult (*nvrtcCreateProgram)(nvrtcProgram*, const char*, const char*, int, const char* const*,
                                    const char* const*);
  nvrtcResult (*nvrtcDestroyProgram)(nvrtcProgram*);
  nvrtcResult (*nvrtcCompileProgram)(nvrtcProgram, int, const char* const*);
  nvrtcResult (*nvrtcGetProgramLogSize)(nvrtcProgram, size_t*);
  nvrtcResult (*nvrtcGetProgramLog)(nvrtcProgram, char*);
  nvrtcResult (*nvrtcGetPTXSize)(nvrtcProgram, size_t*);
  nvrtcResult (*nvrtcGetPTX)(nvrtcProgram, char*);
  nvrtcResult (*nvrtcGetCUBINSize)(nvrtcProgram, size_t*);
  nvrtcResult (*nvrtcGetCUBIN)(nvrtcProgram, char*);
};

template <class F>
void resolve(void* lib, const char* name, F*& slot, std::string& reason) {
  resolveSymbol(lib, "libnvrtc", name, slot, reason);
}

const NvrtcApi& nvrtc() {
  static const NvrtcApi* api = [] {
    auto* a = new NvrtcApi{};
    std::string tried;
    void* lib = openCudaLibrary("libnvrtc.so.13", {"cu13", "cuda_nvrtc"}, tried);
    if (!lib) {
      a->reason = "NVRTC (libnvrtc.so.13, from the CUDA 13 toolkit) was not found; tried " + tried;
      return a;
    }
    resolve(lib, "nvrtcGetErrorString", a->nvrtcGetErrorString, a->reason);
    resolve(lib, "nvrtcVersion", a->nvrtcVersion, a->reason);
    resolve(lib, "nvrtcCreateProgram", a->nvrtcCreateProgram, a->reason);
    resolve(lib, "nvrtcDestroyProgram", a->nvrtcDestroyProgram, a->reason);
    resolve(lib, "nvrtcCompileProgram", a->nvrtcCompileProgram, a->reason);
    resolve(lib, "nvrtcGetProgramLogSize", a->nvrtcGetProgramLogSize, a->reason);
    resolve(lib, "nvrtcGetProgramLog", a->nvrtcGetProgramLog, a->reason);
    resolve(lib, "nvrtcGetPTXSize", a->nvrtcGetPTXSize, a->reason);
    resolve(lib, "nvrtcGetPTX", a->nvrtcGetPTX, a->reason);
    resolve(lib, "nvrtcGetCUBINSize", a->nvrtcGetCUBINSize, a->reason);
    resolve(lib, "nvrtcGetCUBIN", a->nvrtcGetCUBIN, a->reason);
    return a;
  }();
  return *api;
}

const NvrtcApi& nvrtcOrThrow(std::string_view op, const SourceLoc& loc) {
  const NvrtcApi& api = nvrtc();
  if (!api.reason.empty()) throw CompileError::make(loc, op, api.reason);
  return api;
}

// FNV-1a: a stable name for a cache file; the file holds the whole source, compared on load.
uint64_t fnv1a(std::string_view text) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  return h;
}

std::string cacheDirectory() {
  const char* configured = std::getenv("KILN_CACHE_DIR");
  if (configured && std::string_view(configured) == "off") return "";
  if (configured && *configured) return std::string(configured) + "/cuda";
  const char* home = std::getenv("HOME");
  return home && *home ? std::string(home) + "/.cache/kiln/cuda" : "";
}

constexpr std::string_view kCubinMagic = "KILNCUBIN1\n";

// The cache file is the magic, the key text's length and text, then the cubin.
std::string readCached(const std::string& path, const std::string& keyText) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return "";
  std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  const size_t head = kCubinMagic.size() + sizeof(uint64_t);
  if (bytes.size() < head || bytes.compare(0, kCubinMagic.size(), kCubinMagic) != 0) return "";
  uint64_t length = 0;
  std::memcpy(&length, bytes.data() + kCubinMagic.size(), sizeof length);
  if (length != keyText.size() || bytes.size() < head + length ||
      bytes.compare(head, length, keyText) != 0)
    return "";
  return bytes.substr(head + length);
}

// Written to a temporary name and renamed, so a reader never sees half a file; a cache that
// cannot be written only costs a compile next time.
void writeCached(const std::string& dir, const std::string& path, const std::string& keyText,
                 const std::string& cubin) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream file(tmp, std::ios::binary);
    if (!file) return;
    uint64_t length = keyText.size();
    file.write(kCubinMagic.data(), std::streamsize(kCubinMagic.size()));
    file.write(reinterpret_cast<const char*>(&length), sizeof length);
    file.write(keyText.data(), std::streamsize(keyText.size()));
    file.write(cubin.data(), std::streamsize(cubin.size()));
    if (!file) {
      std::filesystem::remove(tmp, error);
      return;
    }
  }
  std::filesystem::rename(tmp, path, error);
  if (error) std::filesystem::remove(tmp, error);
}

struct Loaded {
  std::mutex mutex;
  std::map<std::pair<int, std::string>, CUfunction> functions;  // (device, name + source)
  std::unordered_map<std::string, CUfunction> byName[8];         // per device, by name
};

Loaded& loadedKernels() {
  static Loaded* l = new Loaded;
  return *l;
}

// Kernel `name` of a cubin or PTX `image`, loaded into the current context.
CUfunction loadFunction(const void* image, const std::string& name, std::string_view op, const SourceLoc& loc) {
  const DriverApi& api = driver(op, loc);
  CUmodule module = nullptr;
  check(api.cuModuleLoadData(&module, image), "cuModuleLoadData", op, loc);
  CUfunction function = nullptr;
  check(api.cuModuleGetFunction(&function, module, name.c_str()), "cuModuleGetFunction", op, loc);
  return function;
}

}  // namespace

const std::string& nvrtcUnavailableReason() { return nvrtc().reason; }

std::string nvrtcVersion() {
  const NvrtcApi& api = nvrtcOrThrow("nvrtc", SourceLoc::current());
  int major = 0, minor = 0;
  api.nvrtcVersion(&major, &minor);
  return std::to_string(major) + "." + std::to_string(minor);
}

std::string compile(const std::string& source, const std::string& arch, std::string_view op,
                    const SourceLoc& loc) {
  const NvrtcApi& api = nvrtcOrThrow(op, loc);
  nvrtcProgram program = nullptr;
  if (nvrtcResult r = api.nvrtcCreateProgram(&program, source.c_str(), "kiln_kernel.cu", 0, nullptr, nullptr))
    throw CompileError::make(loc, op, "nvrtcCreateProgram failed: ", api.nvrtcGetErrorString(r));
  struct Destroy {
    const NvrtcApi& api;
    nvrtcProgram& p;
    ~Destroy() { api.nvrtcDestroyProgram(&p); }
  } destroy{api, program};
  const std::string archOption = "--gpu-architecture=" + arch;
  // No fast-math: the kernels' results are compared with the CPU's (-ftz, -prec-div and
  // -prec-sqrt stay at their exact defaults); no contraction, as on the CPU (BUILD's
  // KERNEL_COPTS), so a value rounds the same way in both.
  const char* options[] = {archOption.c_str(), "--std=c++17", "--fmad=false", "-default-device"};
  const nvrtcResult result = api.nvrtcCompileProgram(program, 4, options);
  if (result != 0) {
    size_t logSize = 0;
    api.nvrtcGetProgramLogSize(program, &logSize);
    std::string log(logSize, '\0');
    api.nvrtcGetProgramLog(program, log.data());
    throw CompileError::make(loc, op, "NVRTC could not compile a generated kernel for ", arch, ": ",
                             api.nvrtcGetErrorString(result), "\n", log, "\nsource:\n", source);
  }
  std::string out;
  size_t size = 0;
  if (arch.rfind("sm_", 0) == 0) {
    api.nvrtcGetCUBINSize(program, &size);
    out.resize(size);
    api.nvrtcGetCUBIN(program, out.data());
  } else {
    api.nvrtcGetPTXSize(program, &size);
    out.resize(size);
    api.nvrtcGetPTX(program, out.data());
  }
  return out;
}

CUfunction kernel(int index, const std::string& source, const std::string& name, std::string_view op,
                  const SourceLoc& loc) {
  DeviceInfo& d = device(index, op, loc);
  Loaded& loaded = loadedKernels();
  std::lock_guard lock(loaded.mutex);
  auto key = std::make_pair(index, name + '\n' + source);
  if (auto it = loaded.functions.find(key); it != loaded.functions.end()) return it->second;

  const std::string arch = d.arch();
  const std::string keyText = arch + '\n' + nvrtcVersion() + '\n' + key.second;
  const std::string dir = cacheDirectory();
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(fnv1a(keyText)));
  const std::string path = dir.empty() ? "" : dir + "/" + hex + "-" + arch + ".cubin";
  std::string cubin = path.empty() ? "" : readCached(path, keyText);
  if (cubin.empty()) {
    cubin = compile(source, arch, op, loc);
    if (!path.empty()) writeCached(dir, path, keyText, cubin);
  }
  CUfunction function = loadFunction(cubin.data(), name, op, loc);
  loaded.functions.emplace(std::move(key), function);
  return function;
}

CUfunction kernel(int index, const std::string& name, const std::function<std::string()>& source,
                  std::string_view op, const SourceLoc& loc) {
  Loaded& loaded = loadedKernels();
  const bool cached = index >= 0 && index < 8;
  if (cached) {
    std::lock_guard lock(loaded.mutex);
    if (auto it = loaded.byName[index].find(name); it != loaded.byName[index].end()) return it->second;
  }
  CUfunction function = kernel(index, source(), name, op, loc);
  if (cached) {
    std::lock_guard lock(loaded.mutex);
    loaded.byName[index].emplace(name, function);
  }
  return function;
}

CUfunction imageKernel(int index, const std::string& image, const std::string& name,
                       std::string_view op, const SourceLoc& loc) {
  device(index, op, loc);
  Loaded& loaded = loadedKernels();
  std::lock_guard lock(loaded.mutex);
  auto key = std::make_pair(index, name + "\nimage\n" + image);
  if (auto it = loaded.functions.find(key); it != loaded.functions.end()) return it->second;
  CUfunction function = loadFunction(image.c_str(), name, op, loc);
  loaded.functions.emplace(std::move(key), function);
  return function;
}

void launch(int index, CUfunction function, Dim3 grid, Dim3 block, size_t sharedBytes, void** args,
            std::string_view op, const SourceLoc& loc) {
  if (grid.x == 0 || grid.y == 0 || grid.z == 0) return;  // nothing to compute
  DeviceInfo& d = device(index, op, loc);
  check(driver(op, loc).cuLaunchKernel(function, grid.x, grid.y, grid.z, block.x, block.y, block.z,
                                       unsigned(sharedBytes), d.stream, args, nullptr),
        "cuLaunchKernel", op, loc);
}

}  // namespace kiln::cuda

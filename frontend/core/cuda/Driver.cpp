// The CUDA driver loaded with dlopen, its devices and their streams (see Driver.h).
#include "frontend/core/cuda/Driver.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include "kiln/core/Device.h"
#include "kiln/core/ProfileEvents.h"

namespace kiln::cuda {

namespace {

struct Loaded {
  DriverApi api{};
  std::string reason;  // empty when usable
  int deviceCount = 0;
};

template <class F>
void resolve(void* lib, const char* name, F*& slot, std::string& reason) {
  resolveSymbol(lib, "libcuda.so.1", name, slot, reason);
}

Loaded load() {
  Loaded l;
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* why = dlerror();
    l.reason = std::string("the CUDA driver (libcuda.so.1) could not be loaded: ") + (why ? why : "?");
    return l;
  }
  DriverApi& a = l.api;
  std::string& r = l.reason;
  resolve(lib, "cuInit", a.cuInit, r);
  resolve(lib, "cuDriverGetVersion", a.cuDriverGetVersion, r);
  resolve(lib, "cuDeviceGetCount", a.cuDeviceGetCount, r);
  resolve(lib, "cuDeviceGet", a.cuDeviceGet, r);
  resolve(lib, "cuDeviceGetName", a.cuDeviceGetName, r);
  resolve(lib, "cuDeviceGetAttribute", a.cuDeviceGetAttribute, r);
  resolve(lib, "cuDeviceTotalMem_v2", a.cuDeviceTotalMem, r);
  resolve(lib, "cuDevicePrimaryCtxRetain", a.cuDevicePrimaryCtxRetain, r);
  resolve(lib, "cuCtxSetCurrent", a.cuCtxSetCurrent, r);
  resolve(lib, "cuMemAlloc_v2", a.cuMemAlloc, r);
  resolve(lib, "cuMemFree_v2", a.cuMemFree, r);
  resolve(lib, "cuMemAllocHost_v2", a.cuMemAllocHost, r);
  resolve(lib, "cuMemFreeHost", a.cuMemFreeHost, r);
  resolve(lib, "cuMemGetInfo_v2", a.cuMemGetInfo, r);
  resolve(lib, "cuMemcpyHtoDAsync_v2", a.cuMemcpyHtoDAsync, r);
  resolve(lib, "cuMemcpyDtoHAsync_v2", a.cuMemcpyDtoHAsync, r);
  resolve(lib, "cuMemcpyDtoDAsync_v2", a.cuMemcpyDtoDAsync, r);
  resolve(lib, "cuMemsetD8Async", a.cuMemsetD8Async, r);
  resolve(lib, "cuStreamCreate", a.cuStreamCreate, r);
  resolve(lib, "cuStreamSynchronize", a.cuStreamSynchronize, r);
  resolve(lib, "cuEventCreate", a.cuEventCreate, r);
  resolve(lib, "cuEventRecord", a.cuEventRecord, r);
  resolve(lib, "cuEventQuery", a.cuEventQuery, r);
  resolve(lib, "cuEventSynchronize", a.cuEventSynchronize, r);
  resolve(lib, "cuEventElapsedTime", a.cuEventElapsedTime, r);
  resolve(lib, "cuModuleLoadData", a.cuModuleLoadData, r);
  resolve(lib, "cuModuleGetFunction", a.cuModuleGetFunction, r);
  resolve(lib, "cuLaunchKernel", a.cuLaunchKernel, r);
  resolve(lib, "cuGetErrorName", a.cuGetErrorName, r);
  resolve(lib, "cuGetErrorString", a.cuGetErrorString, r);
  if (!r.empty()) return l;
  if (CUresult res = a.cuInit(0); res != CUDA_SUCCESS) {
    const char* name = nullptr;
    a.cuGetErrorName(res, &name);
    r = std::string("cuInit failed with ") + (name ? name : std::to_string(res).c_str());
    return l;
  }
  if (CUresult res = a.cuDeviceGetCount(&l.deviceCount); res != CUDA_SUCCESS || l.deviceCount == 0) {
    r = "the CUDA driver reports no device";
    l.deviceCount = 0;
  }
  return l;
}

const Loaded& loaded() {
  static const Loaded* l = new Loaded(load());  // never destroyed: tensors may outlive main
  return *l;
}

struct Devices {
  std::mutex mutex;
  std::deque<std::unique_ptr<DeviceInfo>> byIndex;  // null until first used
};

Devices& devices() {
  static Devices* d = new Devices;
  return *d;
}

// Pinned host buffers the copies stage through, each with the event of its last copy.
struct Staging {
  static constexpr size_t kChunk = size_t(4) << 20;
  static constexpr int kBuffers = 2;
  std::mutex mutex;
  void* buffer[kBuffers] = {};
  CUevent done[kBuffers] = {};
};

Staging& staging(int index, const DriverApi& api, std::string_view op, const SourceLoc& loc) {
  static std::mutex mutex;
  static std::vector<std::unique_ptr<Staging>>* all = new std::vector<std::unique_ptr<Staging>>;
  std::lock_guard lock(mutex);
  if (int(all->size()) <= index) all->resize(index + 1);
  auto& s = (*all)[index];
  if (!s) {
    auto fresh = std::make_unique<Staging>();
    for (int i = 0; i < Staging::kBuffers; ++i) {
      check(api.cuMemAllocHost(&fresh->buffer[i], Staging::kChunk), "cuMemAllocHost", op, loc);
      check(api.cuEventCreate(&fresh->done[i], 2 /*CU_EVENT_DISABLE_TIMING*/), "cuEventCreate", op, loc);
    }
    s = std::move(fresh);
  }
  return *s;
}

}  // namespace

void* symbol(void* lib, const char* name) { return dlsym(lib, name); }

void* openCudaLibrary(const char* soname, std::initializer_list<const char*> wheelDirs, std::string& tried) {
  std::vector<std::string> candidates;
  for (const char* env : {"KILN_CUDA_HOME", "CUDA_HOME"})
    if (const char* dir = std::getenv(env); dir && *dir) candidates.push_back(std::string(dir) + "/lib64/" + soname);
  candidates.push_back(std::string("/usr/local/cuda/lib64/") + soname);
  for (const char* wheel : wheelDirs)
    candidates.push_back(std::string("/opt/torch/.venv/lib/python3.12/site-packages/nvidia/") + wheel + "/lib/" + soname);
  candidates.push_back(soname);
  for (const std::string& path : candidates) {
    if (void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) return lib;
    const char* why = dlerror();
    tried += (tried.empty() ? "" : "; ") + path + (why ? std::string(" (") + why + ")" : "");
  }
  return nullptr;
}

const std::string& unavailableReason() { return loaded().reason; }

const DriverApi& driver(std::string_view op, const SourceLoc& loc) {
  const Loaded& l = loaded();
  if (!l.reason.empty()) throw Error::make(loc, op, "no CUDA device: ", l.reason);
  return l.api;
}

std::string describe(CUresult result) {
  const Loaded& l = loaded();
  const char *name = nullptr, *text = nullptr;
  if (l.api.cuGetErrorName) l.api.cuGetErrorName(result, &name);
  if (l.api.cuGetErrorString) l.api.cuGetErrorString(result, &text);
  std::string out = name ? name : "CUresult " + std::to_string(result);
  if (text) out += std::string(" (") + text + ")";
  return out;
}

void check(CUresult result, const char* call, std::string_view op, const SourceLoc& loc) {
  if (result != CUDA_SUCCESS) throw Error::make(loc, op, call, " failed: ", describe(result));
}

DeviceInfo& device(int index, std::string_view op, const SourceLoc& loc) {
  const DriverApi& api = driver(op, loc);
  const int count = loaded().deviceCount;
  if (index < 0 || index >= count)
    throw Error::make(loc, op, "no CUDA device cuda:", index, " (this machine has ", count,
                      count == 1 ? " device)" : " devices)");
  Devices& all = devices();
  std::lock_guard lock(all.mutex);
  if (int(all.byIndex.size()) < count) all.byIndex.resize(count);
  std::unique_ptr<DeviceInfo>& slot = all.byIndex[index];
  if (!slot) {
    auto d = std::make_unique<DeviceInfo>();
    d->index = index;
    check(api.cuDeviceGet(&d->handle, index), "cuDeviceGet", op, loc);
    check(api.cuDevicePrimaryCtxRetain(&d->context, d->handle), "cuDevicePrimaryCtxRetain", op, loc);
    check(api.cuCtxSetCurrent(d->context), "cuCtxSetCurrent", op, loc);
    check(api.cuStreamCreate(&d->stream, 1 /*CU_STREAM_NON_BLOCKING*/), "cuStreamCreate", op, loc);
    char name[256] = {};
    check(api.cuDeviceGetName(name, sizeof name, d->handle), "cuDeviceGetName", op, loc);
    d->name = name;
    check(api.cuDeviceGetAttribute(&d->major, 75, d->handle), "cuDeviceGetAttribute", op, loc);
    check(api.cuDeviceGetAttribute(&d->minor, 76, d->handle), "cuDeviceGetAttribute", op, loc);
    check(api.cuDeviceGetAttribute(&d->multiprocessors, 16, d->handle), "cuDeviceGetAttribute", op, loc);
    check(api.cuDeviceTotalMem(&d->totalMemory, d->handle), "cuDeviceTotalMem", op, loc);
    slot = std::move(d);
  }
  // Each thread needs the context current once; setting it again is cheap.
  thread_local int tCurrent = -1;
  if (tCurrent != index) {
    check(api.cuCtxSetCurrent(slot->context), "cuCtxSetCurrent", op, loc);
    tCurrent = index;
  }
  return *slot;
}

void synchronize(int index, std::string_view op, const SourceLoc& loc) {
  DeviceInfo& d = device(index, op, loc);
  check(driver(op, loc).cuStreamSynchronize(d.stream), "cuStreamSynchronize", op, loc);
}

namespace {

// A "copy" event for the profiler: `name` ("HtoD", "DtoH") of `nbytes` on device `index`.
void recordCopy(const profiler::Stopwatch& watch, const char* name, int index, size_t nbytes) {
  profiler::Event event = watch.stop(name, "copy");
  event.device = Device(kCUDA, index).str();
  event.bytes = int64_t(nbytes);
  profiler::record(std::move(event));
}

}  // namespace

// Timed as the host waits: up to the last chunk's enqueue, which may still be in flight.
void copyHostToDevice(int index, CUdeviceptr dst, const void* src, size_t nbytes,
                      std::string_view op, const SourceLoc& loc) {
  const profiler::Stopwatch watch;
  DeviceInfo& d = device(index, op, loc);
  const DriverApi& api = driver(op, loc);
  Staging& s = staging(index, api, op, loc);
  std::lock_guard lock(s.mutex);
  const char* from = static_cast<const char*>(src);
  for (size_t done = 0, i = 0; done < nbytes; ++i) {
    const int b = int(i % Staging::kBuffers);
    const size_t n = std::min(Staging::kChunk, nbytes - done);
    check(api.cuEventSynchronize(s.done[b]), "cuEventSynchronize", op, loc);
    std::memcpy(s.buffer[b], from + done, n);
    check(api.cuMemcpyHtoDAsync(dst + done, s.buffer[b], n, d.stream), "cuMemcpyHtoDAsync", op, loc);
    check(api.cuEventRecord(s.done[b], d.stream), "cuEventRecord", op, loc);
    done += n;
  }
  if (watch) recordCopy(watch, "HtoD", index, nbytes);
}

void copyDeviceToHost(int index, void* dst, CUdeviceptr src, size_t nbytes, std::string_view op,
                      const SourceLoc& loc) {
  const profiler::Stopwatch watch;
  DeviceInfo& d = device(index, op, loc);
  const DriverApi& api = driver(op, loc);
  Staging& s = staging(index, api, op, loc);
  std::lock_guard lock(s.mutex);
  char* to = static_cast<char*>(dst);
  // Two buffers in flight: the device fills one while the host drains the other.
  size_t issued = 0, drained = 0;
  size_t length[Staging::kBuffers] = {};
  int next = 0;
  auto issue = [&](int b) {
    length[b] = std::min(Staging::kChunk, nbytes - issued);
    check(api.cuMemcpyDtoHAsync(s.buffer[b], src + issued, length[b], d.stream), "cuMemcpyDtoHAsync", op, loc);
    check(api.cuEventRecord(s.done[b], d.stream), "cuEventRecord", op, loc);
    issued += length[b];
  };
  for (int b = 0; b < Staging::kBuffers && issued < nbytes; ++b) issue(b);
  while (drained < nbytes) {
    check(api.cuEventSynchronize(s.done[next]), "cuEventSynchronize", op, loc);
    std::memcpy(to + drained, s.buffer[next], length[next]);
    drained += length[next];
    if (issued < nbytes) issue(next);
    next = (next + 1) % Staging::kBuffers;
  }
  if (watch) recordCopy(watch, "DtoH", index, nbytes);
}

}  // namespace kiln::cuda

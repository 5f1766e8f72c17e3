// The CUDA driver, loaded at run time: libcuda.so.1 is opened with dlopen on first use, so
// every binary builds and runs where there is no GPU, driver or toolkit (DESIGN.md §10).
// No CUDA header is included: the few types and constants Kiln needs are declared here
// with the values of CUDA 13's cuda.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>

#include "kiln/core/Error.h"

namespace kiln::cuda {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st*;
using CUstream = struct CUstream_st*;
using CUevent = struct CUevent_st*;
using CUmodule = struct CUmod_st*;
using CUfunction = struct CUfunc_st*;

inline constexpr CUresult CUDA_SUCCESS = 0;
inline constexpr CUresult CUDA_ERROR_OUT_OF_MEMORY = 2;
inline constexpr CUresult CUDA_ERROR_NOT_READY = 600;

// The entry points Kiln calls, resolved by name (the _v2 ones where cuda.h maps to them).
struct DriverApi {
  CUresult (*cuInit)(unsigned);
  CUresult (*cuDriverGetVersion)(int*);
  CUresult (*cuDeviceGetCount)(int*);
  CUresult (*cuDeviceGet)(CUdevice*, int);
  CUresult (*cuDeviceGetName)(char*, int, CUdevice);
  CUresult (*cuDeviceGetAttribute)(int*, int, CUdevice);
  CUresult (*cuDeviceTotalMem)(size_t*, CUdevice);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext*, CUdevice);
  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuMemAlloc)(CUdeviceptr*, size_t);
  CUresult (*cuMemFree)(CUdeviceptr);
  CUresult (*cuMemAllocHost)(void**, size_t);
  CUresult (*cuMemFreeHost)(void*);
  CUresult (*cuMemGetInfo)(size_t*, size_t*);
  CUresult (*cuMemcpyHtoDAsync)(CUdeviceptr, const void*, size_t, CUstream);
  CUresult (*cuMemcpyDtoHAsync)(void*, CUdeviceptr, size_t, CUstream);
  CUresult (*cuMemcpyDtoDAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
  CUresult (*cuMemsetD8Async)(CUdeviceptr, unsigned char, size_t, CUstream);
  CUresult (*cuStreamCreate)(CUstream*, unsigned);
  CUresult (*cuStreamSynchronize)(CUstream);
  CUresult (*cuEventCreate)(CUevent*, unsigned);
  CUresult (*cuEventRecord)(CUevent, CUstream);
  CUresult (*cuEventQuery)(CUevent);
  CUresult (*cuEventSynchronize)(CUevent);
  CUresult (*cuEventElapsedTime)(float*, CUevent, CUevent);
  CUresult (*cuModuleLoadData)(CUmodule*, const void*);
  CUresult (*cuModuleGetFunction)(CUfunction*, CUmodule, const char*);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                             unsigned, unsigned, CUstream, void**, void**);
  CUresult (*cuGetErrorName)(CUresult, const char**);
  CUresult (*cuGetErrorString)(CUresult, const char**);
};

// The driver, or kiln::Error "no CUDA device: <why>" (no libcuda.so.1, cuInit failed, no
// device). `op` and `loc` name what asked for it.
const DriverApi& driver(std::string_view op, const SourceLoc& loc);

// Why there is no usable CUDA device ("" when there is one). Never throws.
const std::string& unavailableReason();

// "CUDA_ERROR_OUT_OF_MEMORY (out of memory)".
std::string describe(CUresult result);

// Throws kiln::Error naming `op`, the failed driver call and its result unless it succeeded.
void check(CUresult result, const char* call, std::string_view op, const SourceLoc& loc);

// A CUDA toolkit library (`soname`, e.g. "libnvrtc.so.13") opened with dlopen from, in
// order: $KILN_CUDA_HOME/lib64, $CUDA_HOME/lib64, /usr/local/cuda/lib64, the lib folders of
// PyTorch's CUDA wheels named in `wheelDirs` (under the image's site-packages), then the
// loader's path. Null if none opens; `tried` then lists where it looked and why not.
void* openCudaLibrary(const char* soname, std::initializer_list<const char*> wheelDirs, std::string& tried);

// dlsym into `slot`; the first missing name is written to `reason` ("<lib> has no <name>").
void* symbol(void* lib, const char* name);
template <class F>
void resolveSymbol(void* lib, const char* libName, const char* name, F*& slot, std::string& reason) {
  slot = reinterpret_cast<F*>(symbol(lib, name));
  if (!slot && reason.empty()) reason = std::string(libName) + " has no " + name;
}

// One device as the runtime holds it: its primary context (made current on the calling
// thread by device()), its one stream, and what kernels are compiled for.
struct DeviceInfo {
  int index = 0;
  CUdevice handle = 0;
  CUcontext context = nullptr;
  CUstream stream = nullptr;
  std::string name;
  int major = 0, minor = 0;  // compute capability
  int multiprocessors = 0;
  size_t totalMemory = 0;
  std::string arch() const { return "sm_" + std::to_string(major * 10 + minor); }
};

// The device `index`, initialized on first use and current on this thread afterwards.
// kiln::Error naming `op` for a missing device or an index out of range.
DeviceInfo& device(int index, std::string_view op, const SourceLoc& loc);

// Waits for all work queued on device `index`'s stream.
void synchronize(int index, std::string_view op, const SourceLoc& loc);

// Copies between host memory and device memory on the device's stream through pinned
// staging buffers; both return once the host side may be reused (the device→host copy
// once the bytes are in `dst`).
void copyHostToDevice(int index, CUdeviceptr dst, const void* src, size_t nbytes,
                      std::string_view op, const SourceLoc& loc);
void copyDeviceToHost(int index, void* dst, CUdeviceptr src, size_t nbytes,
                      std::string_view op, const SourceLoc& loc);

}  // namespace kiln::cuda

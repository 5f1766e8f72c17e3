#include "kiln/core/Storage.h"

#include <new>

#include "kiln/core/Error.h"

namespace kiln {

namespace {

// What data() points at for zero bytes: aligned, shared, never written.
alignas(Storage::kAlignment) std::byte gEmpty[Storage::kAlignment];

void alignedFree(void* p) { ::operator delete(p, std::align_val_t{Storage::kAlignment}); }

}  // namespace

Storage::Storage(void* data, size_t nbytes, Deleter deleter, Device device)
    : data_(data), nbytes_(nbytes), deleter_(std::move(deleter)), device_(device) {}

Storage::~Storage() {
  if (deleter_) deleter_(data_);
}

std::shared_ptr<Storage> Storage::allocate(size_t nbytes, Device device, std::string_view op,
                                           const std::source_location& loc) {
  if (!device.isCPU())
    throw Error::make(loc, op, "cannot allocate ", nbytes, " bytes on ", device,
                      ": only CPU storage is supported so far");
  if (nbytes == 0) return std::shared_ptr<Storage>(new Storage(gEmpty, 0, {}, device));
  void* p = ::operator new(nbytes, std::align_val_t{kAlignment}, std::nothrow);
  if (!p) throw Error::make(loc, op, "out of memory allocating ", nbytes, " bytes");
  try {
    return std::shared_ptr<Storage>(new Storage(p, nbytes, alignedFree, device));
  } catch (...) {
    alignedFree(p);
    throw;
  }
}

std::shared_ptr<Storage> Storage::fromBlob(void* data, size_t nbytes, Deleter deleter,
                                           Device device) {
  return std::shared_ptr<Storage>(new Storage(data, nbytes, std::move(deleter), device));
}

}  // namespace kiln

// The value side of the op bridge (OpBridge.h): dtypes as element types, metas as tensor
// types, and tensors as kiln.constant attributes (dense and dense_resource) and back.
#include <cstring>
#include <vector>

#include "dialect/KilnOps.h"
#include "bridge/OpBridge.h"
#include "kiln/core/Dispatcher.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/Support/raw_ostream.h"

namespace kiln::bridge {

namespace {

std::string printed(mlir::Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  type.print(os);
  return text;
}

// The tensor's elements in row-major order, read through its strides without telling a
// dispatch hook (the tracer calls this while recording).
std::vector<char> contiguousBytes(const Tensor& value, const SourceLoc& where) {
  if (!value.defined()) throw Error::make(where, "jit", "cannot record an undefined tensor as a constant");
  if (value.is_placeholder())
    throw TraceError::make(where, "jit", "a symbolic trace placeholder of shape ", value.sizes(),
                           " has no values to record as a constant");
  if (value.device().isCUDA()) {
    // A constant captured from a CUDA tensor: its values, copied to the host (the copy is
    // not part of any trace).
    DispatchHookGuard off(nullptr);
    return contiguousBytes(value.cpu(where), where);
  }
  const size_t size = value.element_size();
  const int64_t n = value.numel();
  std::vector<char> bytes(size_t(n) * size);
  if (n == 0) return bytes;
  const char* base = static_cast<const char*>(value.rawData());
  if (value.is_contiguous()) {
    std::memcpy(bytes.data(), base, bytes.size());
    return bytes;
  }
  const Shape& shape = value.sizes();
  const Strides& strides = value.strides();
  Shape index(shape.size(), 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t offset = 0;
    for (size_t d = 0; d < shape.size(); ++d) offset += index[d] * strides[d];
    std::memcpy(bytes.data() + size_t(i) * size, base + offset * int64_t(size), size);
    for (size_t d = shape.size(); d-- > 0;) {
      if (++index[d] < shape[d]) break;
      index[d] = 0;
    }
  }
  return bytes;
}

bool allElementsEqual(const std::vector<char>& bytes, size_t size) {
  for (size_t at = size; at < bytes.size(); at += size)
    if (std::memcmp(bytes.data(), bytes.data() + at, size) != 0) return false;
  return true;
}

mlir::DenseElementsAttr denseElementsFor(mlir::RankedTensorType type, const Tensor& value,
                                         const SourceLoc& where) {
  std::vector<char> bytes = contiguousBytes(value, where);
  const size_t size = value.element_size();
  // i1 is bit-packed in a DenseElementsAttr's raw buffer; bools go through its bool
  // builder, which also detects splats.
  if (value.dtype() == kBool) {
    llvm::SmallVector<bool> flags(bytes.size());
    for (size_t i = 0; i < bytes.size(); ++i) flags[i] = bytes[i] != 0;
    return mlir::DenseElementsAttr::get(type, llvm::ArrayRef<bool>(flags));
  }
  if (!bytes.empty() && allElementsEqual(bytes, size)) bytes.resize(size);
  return mlir::DenseElementsAttr::getFromRawBuffer(type, bytes);
}

Tensor emptyLike(const TensorMeta& meta, const SourceLoc& where) {
  return detail::emptyTensor(meta.shape, meta.dtype, kCPU, false, where);
}

Tensor fromDense(mlir::DenseElementsAttr dense, const TensorMeta& meta, const SourceLoc& where) {
  Tensor out = emptyLike(meta, where);
  char* dst = static_cast<char*>(out.rawData());
  const int64_t n = out.numel();
  if (meta.dtype == kBool) {
    bool* flags = reinterpret_cast<bool*>(dst);
    int64_t i = 0;
    for (bool flag : dense.getValues<bool>()) flags[i++] = flag;
    return out;
  }
  const size_t size = out.element_size();
  llvm::ArrayRef<char> raw = dense.getRawData();
  if (dense.isSplat()) {
    for (int64_t i = 0; i < n; ++i) std::memcpy(dst + size_t(i) * size, raw.data(), size);
  } else if (n != 0) {  // an empty attribute's data() is null: memcpy from null is undefined
    std::memcpy(dst, raw.data(), size_t(n) * size);
  }
  return out;
}

Tensor fromResource(mlir::DenseResourceElementsAttr resource, const TensorMeta& meta,
                    const SourceLoc& where) {
  mlir::DenseResourceElementsHandle handle = resource.getRawHandle();
  const mlir::AsmResourceBlob* blob = handle.getBlob();
  const std::string key = handle.getKey().str();
  if (!blob)
    throw Error::make(where, "jit", "dense_resource '", key,
                      "' has no data (elided or never loaded)");
  Tensor out = emptyLike(meta, where);
  llvm::ArrayRef<char> data = blob->getData();
  const size_t want = size_t(out.numel()) * out.element_size();
  if (data.size() != want)
    throw Error::make(where, "jit", "dense_resource '", key, "' holds ", data.size(),
                      " bytes but ", printed(resource.getType()), " needs ", want);
  char* dst = static_cast<char*>(out.rawData());
  if (meta.dtype == kBool) {
    // One byte per i1; any non-zero byte is true (a bool holding 2 would be undefined).
    for (size_t i = 0; i < want; ++i) dst[i] = data[i] != 0;
  } else if (want != 0) {
    std::memcpy(dst, data.data(), want);
  }
  return out;
}

}  // namespace

mlir::Type elementTypeFor(mlir::MLIRContext* context, DType dtype) {
  mlir::Builder b(context);
  switch (dtype) {
    case DType::Float32: return b.getF32Type();
    case DType::Float64: return b.getF64Type();
    case DType::Float16: return b.getF16Type();
    case DType::BFloat16: return b.getBF16Type();
    case DType::Int32: return b.getI32Type();
    case DType::Int64: return b.getI64Type();
    case DType::Bool: return b.getI1Type();
  }
  detail::throwInvalidDType(dtype);
}

DType dtypeFor(mlir::Type elementType, const SourceLoc& loc) {
  if (elementType.isF32()) return kFloat32;
  if (elementType.isF64()) return kFloat64;
  if (elementType.isF16()) return kFloat16;
  if (elementType.isBF16()) return kBFloat16;
  if (elementType.isSignlessInteger(1)) return kBool;
  if (elementType.isSignlessInteger(32)) return kInt32;
  if (elementType.isSignlessInteger(64)) return kInt64;
  throw TypeError::make(loc, "jit", "element type ", printed(elementType),
                        " has no kiln dtype (f32, f64, f16, bf16, i1, i32 or i64)");
}

mlir::RankedTensorType tensorTypeFor(mlir::MLIRContext* context, const TensorMeta& meta) {
  return mlir::RankedTensorType::get(meta.shape, elementTypeFor(context, meta.dtype));
}

TensorMeta metaFor(mlir::Type type, const SourceLoc& loc) {
  auto ranked = llvm::dyn_cast<mlir::RankedTensorType>(type);
  if (!ranked)
    throw TypeError::make(loc, "jit", "type ", printed(type), " is not a ranked tensor type");
  return TensorMeta{Shape(ranked.getShape()), dtypeFor(ranked.getElementType(), loc), kCPU};
}

mlir::Value buildConstant(mlir::OpBuilder& builder, mlir::Location loc, const Tensor& value,
                          const SourceLoc& where) {
  auto type = tensorTypeFor(builder.getContext(), {value.sizes(), value.dtype()});
  return mlir::kiln::ConstantOp::create(builder, loc, denseElementsFor(type, value, where));
}

mlir::Value buildResourceConstant(mlir::OpBuilder& builder, mlir::Location loc, const Tensor& value,
                                  llvm::StringRef blobName, const SourceLoc& where) {
  auto type = tensorTypeFor(builder.getContext(), {value.sizes(), value.dtype()});
  std::vector<char> bytes = contiguousBytes(value, where);
  if (value.dtype() == kBool)
    for (char& b : bytes) b = b != 0;
  // The blob's alignment is the element's, as MLIR's own resource builders use. An empty
  // tensor gets an empty blob: allocateAndCopy would memcpy from its null data().
  const size_t align = value.element_size();
  mlir::AsmResourceBlob blob =
      bytes.empty() ? mlir::HeapAsmResourceBlob::allocate(0, align, /*dataIsMutable=*/false)
                    : mlir::HeapAsmResourceBlob::allocateAndCopyWithAlign(bytes, align,
                                                                          /*dataIsMutable=*/false);
  auto attr = mlir::DenseResourceElementsAttr::get(type, blobName, std::move(blob));
  return mlir::kiln::ConstantOp::create(builder, loc, attr);
}

Tensor tensorFromElements(mlir::ElementsAttr value, const SourceLoc& where) {
  TensorMeta meta = metaFor(value.getType(), where);
  if (!llvm::cast<mlir::ShapedType>(value.getType()).hasStaticShape())
    throw ShapeError::make(where, "jit", "a constant of type ", printed(value.getType()),
                           " has dynamic dims");
  if (auto dense = llvm::dyn_cast<mlir::DenseElementsAttr>(value)) return fromDense(dense, meta, where);
  if (auto resource = llvm::dyn_cast<mlir::DenseResourceElementsAttr>(value))
    return fromResource(resource, meta, where);
  std::string text;
  llvm::raw_string_ostream os(text);
  value.print(os);
  throw Error::make(where, "jit", "constant ", text, " is neither dense nor dense_resource");
}

}  // namespace kiln::bridge

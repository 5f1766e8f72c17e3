// The bridge between the op table and the kiln dialect: records a dispatched op as a kiln
// op (the tracer's direction) and maps a kiln op back to its OpDef and Attrs (the
// interpreter's and the loader's direction), plus dtype/element-type and constant helpers.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/core/Attrs.h"
#include "kiln/core/DType.h"
#include "kiln/core/Error.h"
#include "kiln/core/OpDef.h"
#include "kiln/core/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributeInterfaces.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/ValueRange.h"

namespace kiln::bridge {

// ---- element types and tensor types ---------------------------------------------------

// f32 f64 f16 bf16 i1 i32 i64 (signless), the dialect's seven element types.
mlir::Type elementTypeFor(mlir::MLIRContext* context, DType dtype);
// The inverse; TypeError naming the type for any other type.
DType dtypeFor(mlir::Type elementType, const SourceLoc& loc = SourceLoc::current());
// tensor<shape x element>; the device is not part of the type.
mlir::RankedTensorType tensorTypeFor(mlir::MLIRContext* context, const TensorMeta& meta);
// Shape and dtype of a ranked tensor type (dynamic dims stay mlir::ShapedType::kDynamic);
// TypeError for anything else.
TensorMeta metaFor(mlir::Type type, const SourceLoc& loc = SourceLoc::current());

// ---- constants ------------------------------------------------------------------------

// `kiln.constant` holding the tensor's values as a DenseElementsAttr (a splat when every
// element has the same bits). This is how factories (full, arange, linspace: kiln.constant
// in the op table) and by-value captures are recorded. Reads the values without telling a
// dispatch hook; TraceError for a symbolic placeholder, which has none.
mlir::Value buildConstant(mlir::OpBuilder& builder, mlir::Location loc, const Tensor& value,
                          const SourceLoc& where = SourceLoc::current());
// The same as a `dense_resource` blob named after `blobName` (uniqued by MLIR): for large
// values such as weights in a dumped graph, which then print once in the resource section.
mlir::Value buildResourceConstant(mlir::OpBuilder& builder, mlir::Location loc, const Tensor& value,
                                  llvm::StringRef blobName,
                                  const SourceLoc& where = SourceLoc::current());
// A fresh contiguous tensor with the values of a DenseElementsAttr or a
// DenseResourceElementsAttr; Error for other attributes and for resources whose blob is
// missing (elided) or of the wrong size.
Tensor tensorFromElements(mlir::ElementsAttr value, const SourceLoc& where = SourceLoc::current());

// ---- ops, table to dialect ------------------------------------------------------------

// Records one dispatched op as `op.kilnOp` with `operands`, its Attrs converted to the
// dialect's attributes, and result types taken from `outputs` (mlir::verify checks them
// against the dialect's type inference). Every op of ops::allOps() is handled except the
// factories (kiln.constant: full, arange), which throw TraceError pointing at
// buildConstant. Bool add/maximum (mul/minimum) are recorded as kiln.or (kiln.and),
// which they equal on i1 and which the dialect accepts there.
mlir::Operation* buildKilnOp(mlir::OpBuilder& builder, mlir::Location loc, const OpDef& op,
                             mlir::ValueRange operands, const Attrs& attrs,
                             std::span<const TensorMeta> outputs,
                             const SourceLoc& where = SourceLoc::current());

// ---- ops, dialect to table ------------------------------------------------------------

// An op of the table and the Attrs to dispatch it with.
struct TableCall {
  const OpDef* op = nullptr;
  Attrs attrs;
};

// The table entry that computes `op` eagerly. Every kiln op that buildKilnOp records maps
// back, and `kiln.broadcast_in_dim` maps to `expand` whatever its dims (the eager view
// places operand dim i at dims[i], so no reshape is needed). A same-shape `kiln.reshape`
// maps to `clone` (a fresh copy, as recorded), any other reshape to `reshape`. Throws
// Error naming the op and its location (formatLocation) for ops without a table entry:
// kiln.constant, kiln.fusion, kiln.callback, kiln.yield and non-kiln ops, which their
// users (the interpreter) handle themselves.
TableCall tableCallFor(mlir::Operation* op, const SourceLoc& where = SourceLoc::current());

// The dialect attributes that buildKilnOp writes and tableCallFor reads for `kilnOp`, in
// the bridge's schema order (empty for ops without attributes). OpBridgeTest holds them
// against each op's ODS attributes (RegisteredOperationName::getAttributeNames()).
std::vector<std::string_view> mappedAttributes(std::string_view kilnOp);

// "file:line:col" for a FileLineColLoc (or the first one inside a name, call-site or fused
// location), else "unknown location".
std::string formatLocation(mlir::Location loc);

// Collects the error diagnostics `context` reports while it lives, each as
// "file:line:col: message", instead of printing them.
class CapturedDiagnostics {
 public:
  explicit CapturedDiagnostics(mlir::MLIRContext* context);
  const std::string& first() const { return first_; }  // "" if none
  const std::string& all() const { return all_; }      // one per line

 private:
  std::string first_, all_;
  mlir::ScopedDiagnosticHandler handler_;
};

}  // namespace kiln::bridge

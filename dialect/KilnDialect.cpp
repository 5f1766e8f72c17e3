// Registers the kiln dialect's ops and attributes, and materializes folded
// constants as kiln.constant.

#include "dialect/KilnDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"  // used by the generated attribute parser

#include "dialect/KilnOps.h"

using namespace mlir;
using namespace mlir::kiln;

#include "dialect/KilnDialect.cpp.inc"

#include "dialect/KilnEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "dialect/KilnAttrs.cpp.inc"

void KilnDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialect/KilnOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialect/KilnAttrs.cpp.inc"
      >();
}

Operation *KilnDialect::materializeConstant(OpBuilder &builder,
                                            Attribute value, Type type,
                                            Location loc) {
  // kiln.constant holds dense and dense_resource elements only.
  if (!isa<DenseElementsAttr, DenseResourceElementsAttr>(value) ||
      cast<ElementsAttr>(value).getType() != type)
    return nullptr;
  return ConstantOp::create(builder, loc, cast<ElementsAttr>(value));
}

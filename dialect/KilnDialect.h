// The kiln dialect, its enum attributes (direction, kinds, distribution) and the
// names of the host ABI's attributes (KilnDialect::get...AttrName()).

#ifndef KILN_DIALECT_KILNDIALECT_H
#define KILN_DIALECT_KILNDIALECT_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/Dialect.h"

#include "dialect/KilnDialect.h.inc"

#include "dialect/KilnEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dialect/KilnAttrs.h.inc"

#endif // KILN_DIALECT_KILNDIALECT_H

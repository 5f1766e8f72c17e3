// The op table: every primitive op the dispatcher runs, listed by family in OpTable.def.
// Adding an op means adding its OpDef to a family's file, its line to OpTable.def and its
// kiln dialect op; nothing else (docs/ARCHITECTURE.md §2).
#pragma once

#include <span>

#include "kiln/core/OpDef.h"

namespace kiln::ops {

#define KILN_OP(var) extern const OpDef var;
#include "frontend/core/ops/OpTable.def"
#undef KILN_OP

// Tensor::to(Device): a copy to another device. Not a primitive of the table (those run on
// one device each, and the tracer records none of this one yet).
extern const OpDef kToDevice;

// Every op above, for the tracer's coverage check and for tests.
std::span<const OpDef* const> allOps();

}  // namespace kiln::ops

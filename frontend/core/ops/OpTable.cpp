// The list of every op in the table, from OpTable.def (see OpTable.h).
#include "frontend/core/ops/OpTable.h"

#include <array>

namespace kiln::ops {

std::span<const OpDef* const> allOps() {
  static const std::array kOps = {
#define KILN_OP(var) &var,
#include "frontend/core/ops/OpTable.def"
#undef KILN_OP
  };
  return kOps;
}

}  // namespace kiln::ops

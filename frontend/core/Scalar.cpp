// Scalar printing (see kiln/core/Scalar.h).
#include "kiln/core/Scalar.h"

namespace kiln {

std::ostream& operator<<(std::ostream& os, const Scalar& scalar) {
  if (scalar.isBoolean()) return os << (scalar.toBool() ? "true" : "false");
  if (scalar.isFloatingPoint()) return os << scalar.toDouble();
  return os << scalar.toLong();
}

}  // namespace kiln

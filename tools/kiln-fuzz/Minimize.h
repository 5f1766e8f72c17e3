// Delta debugging of a failing program: drops outputs, the backward pass and ops (an op
// replaced by its operand or by a new input) while the failure persists.
#pragma once

#include <functional>

#include "tools/kiln-fuzz/Program.h"

namespace kiln::fuzz {

// The smallest program found on which `fails` still holds, trying at most `budget`
// candidates; `p` itself must fail.
Program minimize(Program p, const std::function<bool(const Program&)>& fails, int budget);

// `p` without the nodes no output needs, leaves renumbered in their order.
Program compact(const Program& p);

}  // namespace kiln::fuzz

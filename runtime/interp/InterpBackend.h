// INTERP: the reference interpreter as a backend (runtime/Backend.h). Its programs run the
// recorded function op by op with the eager kernels: the oracle compiled code is checked
// against, and where the default backend cannot compile a program, what runs it.
#pragma once

#include "runtime/Backend.h"

namespace kiln::interp {

const runtime::Backend& interpBackend();

}  // namespace kiln::interp

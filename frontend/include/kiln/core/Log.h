// KILN_LOG: the comma-separated topics Kiln prints progress lines for (retrace, compile).
#pragma once

#include <string_view>

namespace kiln {

// Whether KILN_LOG names `topic` ("KILN_LOG=retrace,compile"); read on every call, so a
// test or a long-running program can switch topics with setenv.
bool logEnabled(std::string_view topic);

}  // namespace kiln

// KILN_LOG topics (see kiln/core/Log.h).
#include "kiln/core/Log.h"

#include <cstdlib>

namespace kiln {

bool logEnabled(std::string_view topic) {
  const char* log = std::getenv("KILN_LOG");
  if (!log) return false;
  std::string_view all(log);
  for (size_t at = 0; at <= all.size();) {
    size_t comma = all.find(',', at);
    if (all.substr(at, comma == std::string_view::npos ? std::string_view::npos : comma - at) == topic)
      return true;
    if (comma == std::string_view::npos) break;
    at = comma + 1;
  }
  return false;
}

}  // namespace kiln

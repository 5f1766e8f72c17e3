// Op attributes (see kiln/core/Attrs.h).
#include "kiln/core/Attrs.h"

#include <cstdio>
#include <cstdlib>

namespace kiln {

Attrs& Attrs::set(std::string_view name, AttrValue value) {
  for (auto& [key, existing] : items_)
    if (key == name) {
      existing = std::move(value);
      return *this;
    }
  items_.emplace_back(name, std::move(value));
  return *this;
}

const AttrValue* Attrs::find(std::string_view name) const {
  for (const auto& [key, value] : items_)
    if (key == name) return &value;
  return nullptr;
}

void Attrs::missing(std::string_view name) {
  std::fprintf(stderr, "kiln internal error: op attribute '%.*s' missing or of another type\n",
               int(name.size()), name.data());
  std::abort();
}

}  // namespace kiln

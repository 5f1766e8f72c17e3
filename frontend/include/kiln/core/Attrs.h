// Op attributes: the non-tensor arguments of a dispatched op (dims, scalars, dtypes), which
// the tracer turns into kiln op attributes.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "kiln/core/DType.h"

namespace kiln {

using AttrValue = std::variant<int64_t, double, bool, std::vector<int64_t>, DType, std::string>;

// A small ordered map from attribute name to value. Names are string literals owned by the
// op definitions, so lookups compare views and nothing is copied.
class Attrs {
 public:
  Attrs() = default;
  Attrs(std::initializer_list<std::pair<std::string_view, AttrValue>> items) : items_(items) {}

  Attrs& set(std::string_view name, AttrValue value);

  bool has(std::string_view name) const { return find(name) != nullptr; }

  // The value of `name` as T; a missing attribute or another type is a bug in an op
  // definition (not a user error) and aborts with the op's attribute name.
  template <class T>
  const T& get(std::string_view name) const {
    const AttrValue* value = find(name);
    if (!value || !std::holds_alternative<T>(*value)) missing(name);
    return std::get<T>(*value);
  }

  // The value of `name` if it is present and a T, else null.
  template <class T>
  const T* getIf(std::string_view name) const {
    const AttrValue* value = find(name);
    return value ? std::get_if<T>(value) : nullptr;
  }

  const std::vector<std::pair<std::string_view, AttrValue>>& items() const { return items_; }

 private:
  const AttrValue* find(std::string_view name) const;
  [[noreturn]] static void missing(std::string_view name);

  std::vector<std::pair<std::string_view, AttrValue>> items_;
};

}  // namespace kiln

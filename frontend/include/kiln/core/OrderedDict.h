// OrderedDict: string keys in insertion order with O(1) lookup, as torch::OrderedDict;
// state dicts, named parameters and module children use it.
#pragma once

#include <cstddef>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "kiln/core/Error.h"

namespace kiln {

template <class V>
class OrderedDict {
 public:
  using Item = std::pair<std::string, V>;

  // Adds `key`; a duplicate key is an Error naming it (a model with two parameters of
  // one name cannot be saved unambiguously).
  V& insert(std::string key, V value, const SourceLoc& loc = SourceLoc::current()) {
    if (index_.count(key))
      throw Error::make(loc, "OrderedDict", "key '", key, "' is already present");
    index_.emplace(key, items_.size());
    items_.emplace_back(std::move(key), std::move(value));
    return items_.back().second;
  }

  // Adds or replaces.
  V& insert_or_assign(std::string key, V value) {
    if (auto it = index_.find(key); it != index_.end()) return items_[it->second].second = std::move(value);
    return insert(std::move(key), std::move(value));
  }

  const V* find(const std::string& key) const {
    auto it = index_.find(key);
    return it == index_.end() ? nullptr : &items_[it->second].second;
  }
  V* find(const std::string& key) {
    auto it = index_.find(key);
    return it == index_.end() ? nullptr : &items_[it->second].second;
  }
  bool contains(const std::string& key) const { return index_.count(key) != 0; }

  // The value of `key`; an Error naming the key if absent.
  const V& at(const std::string& key, const SourceLoc& loc = SourceLoc::current()) const {
    if (const V* v = find(key)) return *v;
    throw Error::make(loc, "OrderedDict", "no key '", key, "'");
  }
  const V& operator[](const std::string& key) const { return at(key); }

  std::vector<std::string> keys() const {
    std::vector<std::string> out;
    for (const Item& item : items_) out.push_back(item.first);
    return out;
  }
  std::vector<V> values() const {
    std::vector<V> out;
    for (const Item& item : items_) out.push_back(item.second);
    return out;
  }

  size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }
  auto begin() const { return items_.begin(); }
  auto end() const { return items_.end(); }
  auto begin() { return items_.begin(); }
  auto end() { return items_.end(); }

 private:
  std::vector<Item> items_;
  std::unordered_map<std::string, size_t> index_;
};

}  // namespace kiln

// A strict, minimal JSON reader (RFC 8259) and the string quoting writers need: enough for
// safetensors headers, without an external library.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kiln::io::json {

// One parsed value. Objects keep their members in file order; numbers keep their text, so
// integers up to 2^64 - 1 convert exactly.
class Value {
 public:
  enum class Kind { Null, Bool, Number, String, Array, Object };

  static Value null() { return Value(Kind::Null); }
  static Value boolean(bool value);
  static Value number(std::string text);
  static Value string(std::string text);
  static Value array(std::vector<Value> items);
  static Value object(std::vector<std::pair<std::string, Value>> members);

  Kind kind() const { return kind_; }
  bool isObject() const { return kind_ == Kind::Object; }
  bool isArray() const { return kind_ == Kind::Array; }
  bool isString() const { return kind_ == Kind::String; }

  bool asBool() const { return bool_; }
  // A string's contents (escapes decoded) or a number's text.
  const std::string& text() const { return text_; }
  const std::vector<Value>& items() const { return items_; }
  const std::vector<std::pair<std::string, Value>>& members() const { return members_; }
  // The member named `key`, or null.
  const Value* find(std::string_view key) const;
  // A number written as a non-negative integer (no sign, fraction or exponent) that fits
  // in 64 bits; nullopt for anything else.
  std::optional<uint64_t> asUint64() const;

 private:
  explicit Value(Kind kind) : kind_(kind) {}

  Kind kind_;
  bool bool_ = false;
  std::string text_;
  std::vector<Value> items_;
  std::vector<std::pair<std::string, Value>> members_;
};

// "an object", "a string", ...: for messages that say what was found.
const char* describe(Value::Kind kind);

// Malformed input: what was expected and the byte offset where parsing stopped.
class ParseError : public std::runtime_error {
 public:
  ParseError(const std::string& message, size_t offset);
  size_t offset() const { return offset_; }

 private:
  size_t offset_;
};

// Parses one JSON value surrounded by optional whitespace. Rejects duplicate object keys,
// invalid UTF-8, unescaped control characters, lone surrogates, leading zeros, trailing
// commas, and nesting deeper than 64.
Value parse(std::string_view text);

// Whether `text` is well-formed UTF-8 (what JSON strings must hold).
bool isValidUtf8(std::string_view text);

// `text` as a JSON string literal, quotes included; control characters, '"' and '\' are
// escaped, other bytes (UTF-8) are written as they are.
std::string quote(std::string_view text);

}  // namespace kiln::io::json

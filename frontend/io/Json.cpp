// The JSON reader: recursive descent over the bytes with one function per grammar rule.
#include "frontend/io/Json.h"

#include <cstdio>

namespace kiln::io::json {

Value Value::boolean(bool value) {
  Value v(Kind::Bool);
  v.bool_ = value;
  return v;
}

Value Value::number(std::string text) {
  Value v(Kind::Number);
  v.text_ = std::move(text);
  return v;
}

Value Value::string(std::string text) {
  Value v(Kind::String);
  v.text_ = std::move(text);
  return v;
}

Value Value::array(std::vector<Value> items) {
  Value v(Kind::Array);
  v.items_ = std::move(items);
  return v;
}

Value Value::object(std::vector<std::pair<std::string, Value>> members) {
  Value v(Kind::Object);
  v.members_ = std::move(members);
  return v;
}

const Value* Value::find(std::string_view key) const {
  for (const auto& [name, value] : members_)
    if (name == key) return &value;
  return nullptr;
}

std::optional<uint64_t> Value::asUint64() const {
  if (kind_ != Kind::Number || text_.empty() || text_.size() > 20) return std::nullopt;
  uint64_t value = 0;
  for (char c : text_) {
    if (c < '0' || c > '9') return std::nullopt;
    uint64_t digit = uint64_t(c - '0');
    if (value > (UINT64_MAX - digit) / 10) return std::nullopt;
    value = value * 10 + digit;
  }
  return value;
}

const char* describe(Value::Kind kind) {
  switch (kind) {
    case Value::Kind::Null: return "null";
    case Value::Kind::Bool: return "a boolean";
    case Value::Kind::Number: return "a number";
    case Value::Kind::String: return "a string";
    case Value::Kind::Array: return "an array";
    case Value::Kind::Object: return "an object";
  }
  return "a value";
}

ParseError::ParseError(const std::string& message, size_t offset)
    : std::runtime_error(message), offset_(offset) {}

namespace {

constexpr int kMaxDepth = 64;

// The length of the UTF-8 sequence starting at s[0] (1 to 4), or 0 if it is not a valid,
// shortest-form encoding of a scalar value (no surrogates, at most U+10FFFF).
size_t utf8SequenceLength(std::string_view s) {
  auto byte = [&](size_t i) { return i < s.size() ? uint8_t(s[i]) : 0; };
  auto continuation = [&](size_t i) { return (byte(i) & 0xC0) == 0x80; };
  uint8_t b0 = byte(0);
  if (b0 < 0x80) return 1;
  if (b0 >= 0xC2 && b0 <= 0xDF) return continuation(1) ? 2 : 0;
  if (b0 >= 0xE0 && b0 <= 0xEF) {
    uint8_t b1 = byte(1);
    bool ok = continuation(1) && continuation(2) && !(b0 == 0xE0 && b1 < 0xA0) &&
              !(b0 == 0xED && b1 >= 0xA0);  // overlong; surrogates
    return ok ? 3 : 0;
  }
  if (b0 >= 0xF0 && b0 <= 0xF4) {
    uint8_t b1 = byte(1);
    bool ok = continuation(1) && continuation(2) && continuation(3) &&
              !(b0 == 0xF0 && b1 < 0x90) && !(b0 == 0xF4 && b1 >= 0x90);  // overlong; > U+10FFFF
    return ok ? 4 : 0;
  }
  return 0;
}

void appendUtf8(std::string& out, uint32_t codePoint) {
  if (codePoint < 0x80) {
    out += char(codePoint);
  } else if (codePoint < 0x800) {
    out += char(0xC0 | (codePoint >> 6));
    out += char(0x80 | (codePoint & 0x3F));
  } else if (codePoint < 0x10000) {
    out += char(0xE0 | (codePoint >> 12));
    out += char(0x80 | ((codePoint >> 6) & 0x3F));
    out += char(0x80 | (codePoint & 0x3F));
  } else {
    out += char(0xF0 | (codePoint >> 18));
    out += char(0x80 | ((codePoint >> 12) & 0x3F));
    out += char(0x80 | ((codePoint >> 6) & 0x3F));
    out += char(0x80 | (codePoint & 0x3F));
  }
}

bool isDigit(char c) { return c >= '0' && c <= '9'; }

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  Value parseDocument() {
    skipWhitespace();
    Value value = parseValue(0);
    skipWhitespace();
    if (pos_ != text_.size()) fail("unexpected characters after the JSON value");
    return value;
  }

 private:
  [[noreturn]] void fail(const std::string& message) const { throw ParseError(message, pos_); }

  bool atEnd() const { return pos_ >= text_.size(); }
  char peek() const { return atEnd() ? '\0' : text_[pos_]; }

  void skipWhitespace() {
    while (!atEnd() && (peek() == ' ' || peek() == '\t' || peek() == '\n' || peek() == '\r')) ++pos_;
  }

  void expect(char c, const char* what) {
    if (peek() != c || atEnd()) fail(std::string("expected ") + what);
    ++pos_;
  }

  Value parseValue(int depth) {
    if (atEnd()) fail("unexpected end of input");
    switch (peek()) {
      case '{': return parseObject(depth + 1);
      case '[': return parseArray(depth + 1);
      case '"': return Value::string(parseString());
      case 't': return parseLiteral("true", Value::boolean(true));
      case 'f': return parseLiteral("false", Value::boolean(false));
      case 'n': return parseLiteral("null", Value::null());
      default:
        if (peek() == '-' || isDigit(peek())) return parseNumber();
        fail(std::string("unexpected character '") + peek() + "'");
    }
  }

  void checkDepth(int depth) {
    if (depth > kMaxDepth) fail("nesting deeper than " + std::to_string(kMaxDepth));
  }

  Value parseObject(int depth) {
    checkDepth(depth);
    ++pos_;  // '{'
    std::vector<std::pair<std::string, Value>> members;
    skipWhitespace();
    if (peek() == '}' && !atEnd()) {
      ++pos_;
      return Value::object(std::move(members));
    }
    while (true) {
      skipWhitespace();
      if (peek() != '"' || atEnd()) fail("expected a string key");
      const size_t keyOffset = pos_;
      std::string key = parseString();
      for (const auto& member : members)
        if (member.first == key) {
          pos_ = keyOffset;
          fail("duplicate key \"" + key + "\"");
        }
      skipWhitespace();
      expect(':', "':' after an object key");
      skipWhitespace();
      members.emplace_back(std::move(key), parseValue(depth));
      skipWhitespace();
      if (peek() == ',' && !atEnd()) {
        ++pos_;
        continue;
      }
      expect('}', "',' or '}' after an object member");
      return Value::object(std::move(members));
    }
  }

  Value parseArray(int depth) {
    checkDepth(depth);
    ++pos_;  // '['
    std::vector<Value> items;
    skipWhitespace();
    if (peek() == ']' && !atEnd()) {
      ++pos_;
      return Value::array(std::move(items));
    }
    while (true) {
      skipWhitespace();
      items.push_back(parseValue(depth));
      skipWhitespace();
      if (peek() == ',' && !atEnd()) {
        ++pos_;
        continue;
      }
      expect(']', "',' or ']' after an array element");
      return Value::array(std::move(items));
    }
  }

  Value parseLiteral(std::string_view word, Value value) {
    if (text_.substr(pos_, word.size()) != word) fail("invalid literal");
    pos_ += word.size();
    return value;
  }

  // -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
  Value parseNumber() {
    const size_t start = pos_;
    auto digits = [&](const char* what) {
      if (!isDigit(peek())) fail(std::string("expected a digit ") + what);
      while (isDigit(peek())) ++pos_;
    };
    if (peek() == '-') ++pos_;
    if (peek() == '0') {
      ++pos_;
      if (isDigit(peek())) fail("leading zeros are not allowed in numbers");
    } else {
      digits("in a number");
    }
    if (peek() == '.') {
      ++pos_;
      digits("after the decimal point");
    }
    if (peek() == 'e' || peek() == 'E') {
      ++pos_;
      if (peek() == '+' || peek() == '-') ++pos_;
      digits("in the exponent");
    }
    return Value::number(std::string(text_.substr(start, pos_ - start)));
  }

  uint32_t parseHex4() {
    uint32_t value = 0;
    for (int i = 0; i < 4; ++i, ++pos_) {
      char c = peek();
      uint32_t digit;
      if (isDigit(c)) digit = uint32_t(c - '0');
      else if (c >= 'a' && c <= 'f') digit = uint32_t(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F') digit = uint32_t(c - 'A' + 10);
      else fail("expected four hex digits after \\u");
      value = value * 16 + digit;
    }
    return value;
  }

  std::string parseString() {
    ++pos_;  // '"'
    std::string out;
    while (true) {
      if (atEnd()) fail("unterminated string");
      const char c = peek();
      if (c == '"') {
        ++pos_;
        return out;
      }
      if (uint8_t(c) < 0x20) {
        char hex[8];
        std::snprintf(hex, sizeof hex, "0x%02x", unsigned(uint8_t(c)));
        fail(std::string("unescaped control character ") + hex + " in a string");
      }
      if (c == '\\') {
        out += parseEscape();
        continue;
      }
      size_t length = utf8SequenceLength(text_.substr(pos_));
      if (length == 0) fail("invalid UTF-8 in a string");
      out.append(text_.substr(pos_, length));
      pos_ += length;
    }
  }

  std::string parseEscape() {
    ++pos_;  // '\'
    if (atEnd()) fail("unterminated string");
    const char c = peek();
    ++pos_;
    switch (c) {
      case '"': return "\"";
      case '\\': return "\\";
      case '/': return "/";
      case 'b': return "\b";
      case 'f': return "\f";
      case 'n': return "\n";
      case 'r': return "\r";
      case 't': return "\t";
      case 'u': break;
      default:
        --pos_;
        fail(std::string("invalid escape '\\") + c + "'");
    }
    uint32_t codePoint = parseHex4();
    if (codePoint >= 0xDC00 && codePoint <= 0xDFFF) fail("lone low surrogate in a \\u escape");
    if (codePoint >= 0xD800 && codePoint <= 0xDBFF) {
      if (text_.substr(pos_, 2) != "\\u") fail("high surrogate without a low surrogate");
      pos_ += 2;
      uint32_t low = parseHex4();
      if (low < 0xDC00 || low > 0xDFFF) fail("high surrogate without a low surrogate");
      codePoint = 0x10000 + ((codePoint - 0xD800) << 10) + (low - 0xDC00);
    }
    std::string out;
    appendUtf8(out, codePoint);
    return out;
  }

  std::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

Value parse(std::string_view text) { return Parser(text).parseDocument(); }

bool isValidUtf8(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    size_t length = utf8SequenceLength(text.substr(i));
    if (length == 0) return false;
    i += length;
  }
  return true;
}

std::string quote(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (uint8_t(c) < 0x20) {
          char escape[8];
          std::snprintf(escape, sizeof escape, "\\u%04x", unsigned(uint8_t(c)));
          out += escape;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

}  // namespace kiln::io::json

// The strict JSON reader behind safetensors headers: what it accepts, and each rejection
// with its message and byte offset.
#include <gtest/gtest.h>

#include "frontend/io/Json.h"

namespace kiln::io::json {
namespace {

TEST(Json, ParsesObjectsInFileOrder) {
  Value v = parse(R"( {"b": [1, 2.5, -3e2], "a": {"t": true, "f": false, "n": null}, "s": ""} )");
  ASSERT_TRUE(v.isObject());
  ASSERT_EQ(v.members().size(), 3u);
  EXPECT_EQ(v.members()[0].first, "b");
  EXPECT_EQ(v.members()[1].first, "a");
  const Value& b = *v.find("b");
  ASSERT_TRUE(b.isArray());
  EXPECT_EQ(b.items()[0].asUint64(), 1u);
  EXPECT_EQ(b.items()[1].text(), "2.5");
  EXPECT_EQ(b.items()[2].text(), "-3e2");
  const Value& a = *v.find("a");
  EXPECT_TRUE(a.find("t")->asBool());
  EXPECT_FALSE(a.find("f")->asBool());
  EXPECT_EQ(a.find("n")->kind(), Value::Kind::Null);
  EXPECT_EQ(v.find("s")->text(), "");
  EXPECT_EQ(v.find("missing"), nullptr);
  EXPECT_TRUE(parse("[]").items().empty());
  EXPECT_TRUE(parse("{}").members().empty());
}

TEST(Json, DecodesEscapesToUtf8) {
  EXPECT_EQ(parse(R"("a\"b\\c\/d\b\f\n\r\t")").text(), "a\"b\\c/d\b\f\n\r\t");
  EXPECT_EQ(parse(R"("\u00e9\u20AC")").text(), "\xC3\xA9\xE2\x82\xAC");
  EXPECT_EQ(parse(R"("\ud83d\ude00")").text(), "\xF0\x9F\x98\x80");  // U+1F600
  EXPECT_EQ(parse("\"caf\xC3\xA9\"").text(), "caf\xC3\xA9");
}

TEST(Json, IntegersConvertExactlyUpTo64Bits) {
  EXPECT_EQ(parse("18446744073709551615").asUint64(), UINT64_MAX);
  EXPECT_EQ(parse("18446744073709551616").asUint64(), std::nullopt);
  EXPECT_EQ(parse("0").asUint64(), 0u);
  EXPECT_EQ(parse("-1").asUint64(), std::nullopt);
  EXPECT_EQ(parse("1.0").asUint64(), std::nullopt);
  EXPECT_EQ(parse("1e3").asUint64(), std::nullopt);
  EXPECT_EQ(parse("\"7\"").asUint64(), std::nullopt);
}

void expectRejected(std::string_view text, const std::string& message, size_t offset) {
  try {
    parse(text);
    ADD_FAILURE() << "accepted: " << text;
  } catch (const ParseError& e) {
    EXPECT_EQ(e.what(), message) << text;
    EXPECT_EQ(e.offset(), offset) << text;
  }
}

TEST(Json, RejectsMalformedInputWithTheOffset) {
  expectRejected("", "unexpected end of input", 0);
  expectRejected("  ", "unexpected end of input", 2);
  expectRejected("[1,]", "unexpected character ']'", 3);
  expectRejected("{\"a\":1,}", "expected a string key", 7);
  expectRejected("{\"a\" 1}", "expected ':' after an object key", 5);
  expectRejected("{\"a\":1 \"b\":2}", "expected ',' or '}' after an object member", 7);
  expectRejected("[1 2]", "expected ',' or ']' after an array element", 3);
  expectRejected("{\"a\":1,\"a\":2}", "duplicate key \"a\"", 7);
  expectRejected("{a:1}", "expected a string key", 1);
  expectRejected("01", "leading zeros are not allowed in numbers", 1);
  expectRejected("-", "expected a digit in a number", 1);
  expectRejected("1.", "expected a digit after the decimal point", 2);
  expectRejected("1e+", "expected a digit in the exponent", 3);
  expectRejected("tru", "invalid literal", 0);
  expectRejected("{} x", "unexpected characters after the JSON value", 3);
  expectRejected("\"abc", "unterminated string", 4);
  expectRejected("\"a\\", "unterminated string", 3);
  expectRejected("\"a\nb\"", "unescaped control character 0x0a in a string", 2);
  expectRejected("\"\\x\"", "invalid escape '\\x'", 2);
  expectRejected("\"\\u12G4\"", "expected four hex digits after \\u", 5);
  expectRejected("\"\\ud83d\"", "high surrogate without a low surrogate", 7);
  expectRejected("\"\\ude00\"", "lone low surrogate in a \\u escape", 7);
  expectRejected("\"\xC3\x28\"", "invalid UTF-8 in a string", 1);
  expectRejected("\"\xED\xA0\x80\"", "invalid UTF-8 in a string", 1);  // a surrogate
  expectRejected("\"\xC0\xAF\"", "invalid UTF-8 in a string", 1);      // overlong '/'
}

TEST(Json, RejectsDeepNesting) {
  EXPECT_NO_THROW(parse(std::string(64, '[') + std::string(64, ']')));
  expectRejected(std::string(65, '['), "nesting deeper than 64", 64);
}

TEST(Json, QuoteEscapesWhatJsonRequires) {
  EXPECT_EQ(quote("plain"), "\"plain\"");
  EXPECT_EQ(quote("a\"b\\c\nd\te\x01"), "\"a\\\"b\\\\c\\nd\\te\\u0001\"");
  EXPECT_EQ(quote("caf\xC3\xA9"), "\"caf\xC3\xA9\"");
  std::string tricky = "x\"\\\b\f\n\r\t\x1f\xC3\xA9";
  EXPECT_EQ(parse(quote(tricky)).text(), tricky);
}

TEST(Json, Utf8Validation) {
  EXPECT_TRUE(isValidUtf8("ascii \xC3\xA9 \xF0\x9F\x98\x80"));
  EXPECT_FALSE(isValidUtf8("\xFF"));
  EXPECT_FALSE(isValidUtf8("\xE2\x82"));  // cut short
  EXPECT_FALSE(isValidUtf8("\xF4\x90\x80\x80"));  // above U+10FFFF
}

}  // namespace
}  // namespace kiln::io::json

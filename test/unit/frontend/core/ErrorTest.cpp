#include "kiln/core/Error.h"

#include <gtest/gtest.h>

#include <type_traits>

#include "kiln/core/DType.h"
#include "kiln/core/Device.h"
#include "kiln/core/Shape.h"

namespace kiln {
namespace {

// Defined at the end of this file under `#line 12 "./model.cpp"`: a user's call site.
std::source_location modelLocation();

TEST(ErrorTest, MessageNamesOpShapesAndUserLine) {
  ShapeError e = ShapeError::make(modelLocation(), "add", "operands have shapes ", Shape{2, 3},
                                  " and ", Shape{4}, ", which cannot be broadcast");
  EXPECT_STREQ(e.what(),
               "kiln::add: operands have shapes [2, 3] and [4], which cannot be broadcast "
               "(at model.cpp:12)");
  EXPECT_EQ(e.op(), "add");
  EXPECT_EQ(e.message(), "operands have shapes [2, 3] and [4], which cannot be broadcast");
  EXPECT_EQ(e.location().line(), 12u);
  EXPECT_STREQ(e.location().file_name(), "./model.cpp");  // kept as given for the tracer
}

TEST(ErrorTest, StreamsDTypesDevicesAndNumbers) {
  TypeError e = TypeError::make(modelLocation(), "exp", "got ", kInt64, " on ",
                                Device(kCUDA, 1), " with ", 3, " dims and scale ", 0.5);
  EXPECT_STREQ(e.what(),
               "kiln::exp: got int64 on cuda:1 with 3 dims and scale 0.5 (at model.cpp:12)");
}

TEST(ErrorTest, PathAsGivenByTheCompiler) {
  int line = __LINE__ + 1;
  Error e = Error::make(std::source_location::current(), "load", "no such file");
  std::string expected = "kiln::load: no such file (at " +
                         std::string(detail::displayPath(__FILE__)) + ":" +
                         std::to_string(line) + ")";
  EXPECT_EQ(e.what(), expected);
  EXPECT_EQ(std::string(__FILE__), "test/unit/frontend/core/ErrorTest.cpp");
}

TEST(ErrorTest, DisplayPathDropsOnlyLeadingDotSlash) {
  EXPECT_EQ(detail::displayPath("./model.cpp"), "model.cpp");
  EXPECT_EQ(detail::displayPath("././src/model.cpp"), "src/model.cpp");
  EXPECT_EQ(detail::displayPath("src/./model.cpp"), "src/./model.cpp");
  EXPECT_EQ(detail::displayPath("/home/me/model.cpp"), "/home/me/model.cpp");
  EXPECT_EQ(detail::displayPath("../model.cpp"), "../model.cpp");
}

TEST(ErrorTest, EachKindIsAnErrorAndMakeReturnsTheKind) {
  static_assert(std::is_same_v<decltype(ShapeError::make(modelLocation(), "x")), ShapeError>);
  static_assert(std::is_same_v<decltype(TypeError::make(modelLocation(), "x")), TypeError>);
  static_assert(std::is_same_v<decltype(TraceError::make(modelLocation(), "x")), TraceError>);
  static_assert(std::is_same_v<decltype(CompileError::make(modelLocation(), "x")), CompileError>);
  static_assert(std::is_same_v<decltype(IOError::make(modelLocation(), "x")), IOError>);
  static_assert(std::is_base_of_v<Error, ShapeError> && std::is_base_of_v<Error, TypeError> &&
                std::is_base_of_v<Error, TraceError> && std::is_base_of_v<Error, CompileError> &&
                std::is_base_of_v<Error, IOError>);
  static_assert(std::is_base_of_v<std::runtime_error, Error>);
}

TEST(ErrorTest, CaughtAsItsKindAsErrorAndAsRuntimeError) {
  auto raise = [] { throw TraceError::make(modelLocation(), "item", "value read in a trace"); };
  EXPECT_THROW(raise(), TraceError);
  EXPECT_THROW(raise(), Error);
  try {
    raise();
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "kiln::item: value read in a trace (at model.cpp:12)");
  }
}

}  // namespace
}  // namespace kiln

// Last in the file: #line renames everything after it.
namespace kiln {
namespace {
#line 12 "./model.cpp"
std::source_location modelLocation() { return std::source_location::current(); }
}  // namespace
}  // namespace kiln

// Assertions on kiln errors for the eager core's tests: the exact what() including the
// user's source line, and "throws without crashing" for inputs that might crash.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <source_location>
#include <string>

#include "kiln/core/Error.h"

namespace kiln::testing {

// " (at <file>:<line>)" for the caller's line, as kiln::Error::what() ends. Inside a
// macro argument source_location reports the macro's line, as it does for the statement
// under test in the same macro, so the two agree however the call is wrapped.
inline std::string at(const std::source_location& loc = std::source_location::current()) {
  return " (at " + std::string(kiln::detail::displayPath(loc.file_name())) + ":" +
         std::to_string(loc.line()) + ")";
}

}  // namespace kiln::testing

// Expects `statement` to throw `Kind` whose what() equals `expected`.
#define EXPECT_KILN_ERROR(statement, Kind, expected)                                        \
  do {                                                                                      \
    try {                                                                                   \
      statement;                                                                            \
      ADD_FAILURE() << "expected " #Kind " from: " #statement;                              \
    } catch (const Kind& kilnError) {                                                       \
      EXPECT_EQ(std::string(kilnError.what()), std::string(expected));                      \
    } catch (const std::exception& otherError) {                                            \
      ADD_FAILURE() << "expected " #Kind " from: " #statement ", got: " << otherError.what(); \
    }                                                                                       \
  } while (0)

// Expects `statement` to throw `Kind` whose what() contains `substring`.
#define EXPECT_KILN_ERROR_HAS(statement, Kind, substring)                                   \
  do {                                                                                      \
    try {                                                                                   \
      statement;                                                                            \
      ADD_FAILURE() << "expected " #Kind " from: " #statement;                              \
    } catch (const Kind& kilnError) {                                                       \
      EXPECT_THAT(std::string(kilnError.what()), ::testing::HasSubstr(substring));          \
    } catch (const std::exception& otherError) {                                            \
      ADD_FAILURE() << "expected " #Kind " from: " #statement ", got: " << otherError.what(); \
    }                                                                                       \
  } while (0)

// Expects `statement` to throw `Kind`, run in a fresh child process so that a crash on bad
// input (the bug being tested for) fails this test alone instead of the whole binary. The
// "threadsafe" style re-executes the test binary, so the child has its own thread pool.
#define EXPECT_THROWS_WITHOUT_CRASH(statement, Kind)                                        \
  do {                                                                                      \
    GTEST_FLAG_SET(death_test_style, "threadsafe");                                         \
    EXPECT_EXIT(                                                                            \
        {                                                                                   \
          try {                                                                             \
            statement;                                                                      \
          } catch (const Kind&) {                                                           \
            std::_Exit(0);                                                                  \
          } catch (...) {                                                                   \
            std::_Exit(2);                                                                  \
          }                                                                                 \
          std::_Exit(1);                                                                    \
        },                                                                                  \
        ::testing::ExitedWithCode(0), "")                                                   \
        << "exit 1: no exception; exit 2: another exception; a signal: a crash";            \
  } while (0)

// kiln::Error and its kinds: user mistakes reported with the op and the user's source line.
#pragma once

#include <cstdint>
#include <source_location>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace kiln {

// Where the user's code called into Kiln; every public entry point takes one defaulted to
// std::source_location::current().
using SourceLoc = std::source_location;

namespace detail {

// Shapes and strides are plain vectors; they print as "[2, 3]" (see Shape.h).
void streamArg(std::ostream& os, const std::vector<int64_t>& dims);

template <class T>
void streamArg(std::ostream& os, const T& value) {
  os << value;  // DType, Device, ... are found by argument-dependent lookup
}

template <class... Args>
std::string concat(const Args&... args) {
  std::ostringstream os;
  (streamArg(os, args), ...);
  return os.str();
}

// The file name as the user wrote it on the command line, less a leading "./".
std::string_view displayPath(std::string_view file);

}  // namespace detail

// Every user-facing failure. what() reads
//   kiln::<op>: <message> (at <file>:<line>)
// and the parts stay available for the tracer, which turns them into MLIR locations.
class Error : public std::runtime_error {
 public:
  Error(std::string_view op, std::string message, const std::source_location& loc);

  // One-line call sites: Error::make(loc, "add", "shapes ", a, " and ", b, " differ").
  template <class... Args>
  static Error make(const std::source_location& loc, std::string_view op,
                    const Args&... args) {
    return Error(op, detail::concat(args...), loc);
  }

  const std::string& op() const noexcept { return op_; }
  const std::string& message() const noexcept { return message_; }
  const std::source_location& location() const noexcept { return loc_; }

 private:
  std::string op_;
  std::string message_;
  std::source_location loc_;
};

namespace detail {

// Gives each error kind a make() that returns that kind, so `throw ShapeError::make(...)`
// can be caught as ShapeError.
template <class Self>
class ErrorKind : public Error {
 public:
  using Error::Error;

  template <class... Args>
  static Self make(const std::source_location& loc, std::string_view op,
                   const Args&... args) {
    return Self(op, detail::concat(args...), loc);
  }
};

}  // namespace detail

// Shapes that do not fit: broadcasting, reshape, out-of-range dims.
class ShapeError : public detail::ErrorKind<ShapeError> {
 public:
  using ErrorKind::ErrorKind;
};

// Dtypes an op does not accept.
class TypeError : public detail::ErrorKind<TypeError> {
 public:
  using ErrorKind::ErrorKind;
};

// Something a trace cannot express or a later call that differs from the trace.
class TraceError : public detail::ErrorKind<TraceError> {
 public:
  using ErrorKind::ErrorKind;
};

// A failure inside the compiler: a pass, lowering or code generation.
class CompileError : public detail::ErrorKind<CompileError> {
 public:
  using ErrorKind::ErrorKind;
};

// A compiled result that differs from the reference interpreter's (check mode).
class CheckError : public detail::ErrorKind<CheckError> {
 public:
  using ErrorKind::ErrorKind;
};

// Reading or writing files: checkpoints, dumps, caches, data sets.
class IOError : public detail::ErrorKind<IOError> {
 public:
  using ErrorKind::ErrorKind;
};

}  // namespace kiln

#include "kiln/core/Error.h"

#include "kiln/core/Shape.h"

namespace kiln {

namespace detail {

void streamArg(std::ostream& os, const std::vector<int64_t>& dims) {
  os << formatShape(dims);
}

std::string_view displayPath(std::string_view file) {
  while (file.starts_with("./")) file.remove_prefix(2);
  return file;
}

}  // namespace detail

namespace {

std::string composeWhat(std::string_view op, std::string_view message,
                        const std::source_location& loc) {
  std::ostringstream os;
  os << "kiln::" << op << ": " << message << " (at " << detail::displayPath(loc.file_name())
     << ":" << loc.line() << ")";
  return os.str();
}

}  // namespace

Error::Error(std::string_view op, std::string message, const std::source_location& loc)
    : std::runtime_error(composeWhat(op, message, loc)),
      op_(op),
      message_(std::move(message)),
      loc_(loc) {}

}  // namespace kiln

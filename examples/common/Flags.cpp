#include "examples/common/Flags.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <utility>

namespace kiln::examples {

namespace {

template <class T>
std::string show(const T& value) {
  std::ostringstream os;
  os << value;
  return os.str();
}

// The whole of `text` as a T, or nothing (from_chars accepts no sign for unsigned types,
// no leading spaces and no trailing garbage once we check that it consumed everything).
template <class T>
std::optional<T> number(const std::string& text) {
  T value{};
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end || text.empty()) return std::nullopt;
  return value;
}

std::string inQuotes(const std::string& text) { return "'" + text + "'"; }

}  // namespace

Flags::Flags(std::string program, std::string summary)
    : program_(std::move(program)), summary_(std::move(summary)) {}

void Flags::add(std::string name, int64_t& value, std::string metavar, std::string help,
                int64_t min) {
  declare(std::move(name), std::move(metavar), std::move(help), show(value), Int{&value, min});
}

void Flags::add(std::string name, uint64_t& value, std::string metavar, std::string help) {
  declare(std::move(name), std::move(metavar), std::move(help), show(value), Uint{&value});
}

void Flags::add(std::string name, double& value, std::string metavar, std::string help,
                double min, double max) {
  declare(std::move(name), std::move(metavar), std::move(help), show(value),
          Real{&value, min, max});
}

void Flags::add(std::string name, std::string& value, std::string metavar, std::string help) {
  declare(std::move(name), std::move(metavar), std::move(help), value, Text{&value});
}

void Flags::add(std::string name, std::optional<int64_t>& value, std::string metavar,
                std::string help, std::string unsetText) {
  std::string defaultText = value ? show(*value) : std::move(unsetText);
  declare(std::move(name), std::move(metavar), std::move(help), std::move(defaultText),
          OptionalInt{&value});
}

void Flags::add(std::string name, bool& value, std::string help) {
  declare(std::move(name), "", std::move(help), value ? "on" : "off", Switch{&value});
}

void Flags::declare(std::string name, std::string metavar, std::string help,
                    std::string defaultText, Target target) {
  flags_.push_back({std::move(name), std::move(metavar), std::move(help),
                    std::move(defaultText), target});
}

std::optional<std::string> Flags::assign(const Flag& flag, const std::string& text) {
  auto bad = [&](const std::string& what) {
    return std::optional<std::string>("--" + flag.name + ": " + inQuotes(text) + " " + what);
  };
  auto integerAtLeast = [&](int64_t min, int64_t& out) -> std::optional<std::string> {
    std::optional<int64_t> n = number<int64_t>(text);
    if (!n) return bad("is not an integer");
    if (*n < min) return bad("is less than " + show(min));
    out = *n;
    return std::nullopt;
  };
  return std::visit(
      [&]<class T>(const T& target) -> std::optional<std::string> {
        if constexpr (std::is_same_v<T, Int>) {
          return integerAtLeast(target.min, *target.value);
        } else if constexpr (std::is_same_v<T, OptionalInt>) {
          int64_t n = 0;
          if (auto error = integerAtLeast(1, n)) return error;
          *target.value = n;
          return std::nullopt;
        } else if constexpr (std::is_same_v<T, Uint>) {
          std::optional<uint64_t> n = number<uint64_t>(text);
          if (!n) return bad("is not a non-negative integer");
          *target.value = *n;
          return std::nullopt;
        } else if constexpr (std::is_same_v<T, Real>) {
          std::optional<double> x = number<double>(text);
          if (!x || !std::isfinite(*x)) return bad("is not a number");
          if (*x < target.min || *x > target.max)
            return bad("is outside [" + show(target.min) + ", " + show(target.max) + "]");
          *target.value = *x;
          return std::nullopt;
        } else if constexpr (std::is_same_v<T, Switch>) {
          return std::optional<std::string>("--" + flag.name + " takes no value");
        } else {
          if (text.empty()) return bad("is empty");
          *target.value = text;
          return std::nullopt;
        }
      },
      flag.target);
}

std::optional<std::string> Flags::parse(int argc, const char* const* argv, bool& helpAsked) {
  helpAsked = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      helpAsked = true;
      return std::nullopt;
    }
    if (arg.rfind("--", 0) != 0) return "unexpected argument " + inQuotes(arg);
    std::string name = arg.substr(2);
    std::optional<std::string> value;
    if (size_t eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name.resize(eq);
    }
    const Flag* flag = nullptr;
    for (const Flag& f : flags_)
      if (f.name == name) flag = &f;
    if (!flag) return "unknown flag --" + name;
    if (auto* on = std::get_if<Switch>(&flag->target); on && !value) {
      *on->value = true;
      continue;
    }
    if (!value) {
      if (i + 1 == argc) return "--" + name + " needs a value (" + flag->metavar + ")";
      value = argv[++i];
    }
    if (auto error = assign(*flag, *value)) return error;
  }
  return std::nullopt;
}

void Flags::parseOrExit(int argc, const char* const* argv) {
  bool helpAsked = false;
  if (auto error = parse(argc, argv, helpAsked)) fail(*error);
  if (helpAsked) {
    std::cout << usage();
    std::exit(0);
  }
}

void Flags::fail(const std::string& message) const {
  std::cerr << program_ << ": " << message << "\n" << usage();
  std::exit(2);
}

std::string Flags::usage() const {
  std::ostringstream os;
  os << "usage: " << program_ << " [--flag value]...\n" << summary_ << "\n\nflags:\n";
  size_t width = 0;
  for (const Flag& f : flags_) width = std::max(width, f.name.size() + f.metavar.size() + 3);
  for (const Flag& f : flags_) {
    const std::string spelled = f.metavar.empty() ? "--" + f.name : "--" + f.name + " " + f.metavar;
    os << "  " << std::left << std::setw(int(width)) << spelled
       << "  " << f.help << " (default " << f.defaultText << ")\n";
  }
  os << "  " << std::left << std::setw(int(width)) << "--help" << "  prints this text\n";
  return os.str();
}

}  // namespace kiln::examples

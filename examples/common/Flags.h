// Command-line flags for the example programs: `--name value` or `--name=value`, typed,
// with a usage text built from the declarations and their defaults.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace kiln::examples {

// Declare each flag against the variable that holds its default, then parse:
//
//   int64_t epochs = 2;
//   Flags flags("fashion_mnist_mlp", "Trains an MLP on Fashion-MNIST.");
//   flags.add("epochs", epochs, "N", "passes over the training set");
//   flags.parseOrExit(argc, argv);
//
// Every flag takes a value except switches (`--distributed`); --help prints the usage.
// Errors name the flag and the value.
class Flags {
 public:
  Flags(std::string program, std::string summary);

  // An integer of at least `min`.
  void add(std::string name, int64_t& value, std::string metavar, std::string help,
           int64_t min = 1);
  // Any unsigned 64-bit integer (seeds).
  void add(std::string name, uint64_t& value, std::string metavar, std::string help);
  // A finite number in [min, max].
  void add(std::string name, double& value, std::string metavar, std::string help,
           double min, double max);
  void add(std::string name, std::string& value, std::string metavar, std::string help);
  // An integer of at least 1, or unset (the default shows as `unsetText`).
  void add(std::string name, std::optional<int64_t>& value, std::string metavar,
           std::string help, std::string unsetText);
  // A switch: off unless given, `--name` alone turns it on (it takes no value).
  void add(std::string name, bool& value, std::string help);

  // Parses argv[1..argc) into the variables. Returns an error message ("--epochs: 'x' is
  // not an integer"), or nothing on success; `helpAsked` is set for --help / -h.
  std::optional<std::string> parse(int argc, const char* const* argv, bool& helpAsked);
  // parse(), then on an error prints "<program>: <error>" and the usage to stderr and exits
  // with status 2; on --help prints the usage to stdout and exits with status 0.
  void parseOrExit(int argc, const char* const* argv);
  // Prints "<program>: <message>" and the usage to stderr and exits with status 2, for
  // checks that involve several flags.
  [[noreturn]] void fail(const std::string& message) const;

  std::string usage() const;
  const std::string& program() const { return program_; }

 private:
  struct Int { int64_t* value; int64_t min; };
  struct Uint { uint64_t* value; };
  struct Real { double* value; double min, max; };
  struct Text { std::string* value; };
  struct OptionalInt { std::optional<int64_t>* value; };
  struct Switch { bool* value; };
  using Target = std::variant<Int, Uint, Real, Text, OptionalInt, Switch>;

  struct Flag {
    std::string name;
    std::string metavar;
    std::string help;
    std::string defaultText;
    Target target;
  };

  void declare(std::string name, std::string metavar, std::string help,
               std::string defaultText, Target target);
  static std::optional<std::string> assign(const Flag& flag, const std::string& text);

  std::string program_;
  std::string summary_;
  std::vector<Flag> flags_;
};

}  // namespace kiln::examples

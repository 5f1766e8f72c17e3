// kiln-run: runs a graph written by jit::dump on inputs from .npy files, writes each output
// as <output-dir>/<name>.npy and prints its name, dtype and shape; with --repeat, also the
// time per run. Mistakes (bad flags or files, missing or unknown inputs, wrong shapes) are
// one line on stderr and exit code 2.
#include "tools/kiln-run/KilnRun.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/core/Error.h"
#include "kiln/core/Tensor.h"
#include "kiln/io/Npy.h"
#include "kiln/jit/Trace.h"

namespace {

constexpr const char* kUsage =
    "usage: kiln-run MODEL [INPUT.npy ...] [--input NAME=FILE.npy ...] [--output-dir DIR]\n"
    "                [--repeat N [--warmup M]] [--backend NAME]\n"
    "\n"
    "Runs MODEL (a graph written by jit::dump, .mlirbc or .mlir) with the backend that\n"
    "--backend names: MLIR compiles it for this CPU, INTERP runs the reference interpreter.\n"
    "The default is KILN_JIT_BACKEND, else MLIR, which leaves graphs with dynamic dims to\n"
    "the interpreter. Inputs are given by name (--input x=x.npy) or, positionally, in the\n"
    "graph's order. Each output is written to DIR/<name>.npy (DIR is created if needed)\n"
    "and printed as <name>: <dtype> <shape>. --repeat N times N runs after M warm-up runs\n"
    "and prints the median and the minimum per run. Exit code 2 on\n"
    "any mistake.\n";

// A mistake on the command line, reported as "kiln-run: <message>".
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Flags {
  std::string model;
  std::vector<std::string> positional;                     // input files in graph order
  std::vector<std::pair<std::string, std::string>> named;  // --input name=file
  std::optional<std::string> outputDir;
  int repeat = 0;
  int warmup = 0;
  std::string backend;  // --backend: jit::CompileOptions::backend
};

int count(std::string_view flag, std::string_view text) {
  int value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < 0)
    throw UsageError(std::string(flag) + " needs a count (0 or more), got '" + std::string(text) +
                     "'");
  return value;
}

Flags parseFlags(int argc, char** argv) {
  Flags flags;
  std::vector<std::string_view> args(argv + 1, argv + argc);
  for (size_t i = 0; i < args.size(); ++i) {
    std::string_view arg = args[i];
    if (arg == "-h" || arg == "--help") {
      std::cout << kUsage;
      std::exit(0);
    }
    if (!arg.starts_with("-") || arg == "-") {
      if (flags.model.empty())
        flags.model = arg;
      else
        flags.positional.emplace_back(arg);
      continue;
    }
    // --flag value or --flag=value
    std::string_view flag = arg.substr(0, arg.find('='));
    std::optional<std::string_view> inlineValue;
    if (flag.size() < arg.size()) inlineValue = arg.substr(flag.size() + 1);
    auto value = [&]() -> std::string_view {
      if (inlineValue) return *inlineValue;
      if (i + 1 == args.size()) throw UsageError(std::string(flag) + " needs a value");
      return args[++i];
    };
    if (flag == "--input") {
      std::string_view spec = value();
      size_t eq = spec.find('=');
      if (eq == std::string_view::npos || eq == 0 || eq + 1 == spec.size())
        throw UsageError("--input needs NAME=FILE.npy, got '" + std::string(spec) + "'");
      flags.named.emplace_back(spec.substr(0, eq), spec.substr(eq + 1));
    } else if (flag == "--output-dir") {
      flags.outputDir = value();
    } else if (flag == "--repeat") {
      flags.repeat = count(flag, value());
    } else if (flag == "--warmup") {
      flags.warmup = count(flag, value());
    } else if (flag == "--backend") {
      flags.backend = value();
      if (flags.backend.empty()) throw UsageError("--backend needs a name (MLIR, INTERP)");
    } else {
      throw UsageError("unknown flag '" + std::string(arg) + "' (see kiln-run --help)");
    }
  }
  if (flags.model.empty()) throw UsageError("no model given (see kiln-run --help)");
  if (flags.warmup > 0 && flags.repeat == 0) throw UsageError("--warmup needs --repeat");
  return flags;
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& name : names) out += (out.empty() ? "" : ", ") + name;
  return out;
}

// The graph's inputs in its order, read from the files the flags name; the shapes and
// dtypes are checked when the graph runs.
std::vector<kiln::Tensor> readInputs(const kiln::jit::LoadedGraph& graph, const Flags& flags) {
  const std::vector<std::string>& names = graph.input_names();
  if (flags.positional.size() > names.size())
    throw UsageError(std::to_string(flags.positional.size()) +
                     " positional inputs given but the graph takes " +
                     std::to_string(names.size()) + " (" + joined(names) + ")");
  std::vector<std::optional<std::string>> files(names.size());
  for (size_t i = 0; i < flags.positional.size(); ++i) files[i] = flags.positional[i];
  for (const auto& [name, file] : flags.named) {
    auto it = std::find(names.begin(), names.end(), name);
    if (it == names.end())
      throw UsageError("unknown input '" + name + "'; the graph takes " + joined(names));
    std::optional<std::string>& slot = files[size_t(it - names.begin())];
    if (slot) throw UsageError("input '" + name + "' is given twice");
    slot = file;
  }
  std::vector<kiln::Tensor> inputs;
  for (size_t i = 0; i < names.size(); ++i) {
    if (!files[i])
      throw UsageError("missing input '" + names[i] + "'; pass --input " + names[i] + "=FILE.npy");
    inputs.push_back(kiln::io::load_npy(*files[i]));
  }
  return inputs;
}

void writeOutputs(const kiln::jit::LoadedGraph& graph, const std::vector<kiln::Tensor>& outputs,
                  const std::optional<std::string>& dir) {
  if (dir) {
    std::error_code error;
    std::filesystem::create_directories(*dir, error);
    if (error)
      throw UsageError("cannot create the output directory " + *dir + ": " + error.message());
  }
  const std::vector<std::string>& names = graph.output_names();
  for (size_t i = 0; i < outputs.size(); ++i) {
    std::cout << names[i] << ": "
              << kiln::detail::concat(outputs[i].dtype(), " ", outputs[i].sizes());
    if (dir) {
      std::string path = (std::filesystem::path(*dir) / (names[i] + ".npy")).string();
      kiln::io::save_npy(outputs[i], path);
      std::cout << " -> " << path;
    }
    std::cout << "\n";
  }
}

// Runs the graph `repeat` times after `warmup` runs and prints the median and minimum.
void timeRuns(const kiln::jit::LoadedGraph& graph, const std::vector<kiln::Tensor>& inputs,
              int repeat, int warmup) {
  using Clock = std::chrono::steady_clock;
  for (int i = 0; i < warmup; ++i) graph(inputs);
  std::vector<double> ms;
  for (int i = 0; i < repeat; ++i) {
    Clock::time_point start = Clock::now();
    graph(inputs);
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
  }
  std::sort(ms.begin(), ms.end());
  double median =
      ms.size() % 2 ? ms[ms.size() / 2] : (ms[ms.size() / 2 - 1] + ms[ms.size() / 2]) / 2;
  std::cout << std::fixed << std::setprecision(3) << "time per run: median " << median
            << " ms, min " << ms.front() << " ms (" << repeat << " runs after " << warmup
            << " warm-up runs)\n";
}

// Mistakes are reported on one line, whatever the message holds.
int report(std::string message, int code) {
  std::replace(message.begin(), message.end(), '\n', ' ');
  std::cerr << "kiln-run: " << message << "\n";
  return code;
}

int run(const Flags& flags) {
  kiln::jit::CompileOptions options;
  options.backend = flags.backend;
  kiln::jit::LoadedGraph graph = kiln::jit::load(flags.model, options);
  std::vector<kiln::Tensor> inputs = readInputs(graph, flags);
  std::vector<kiln::Tensor> outputs = graph(inputs);
  writeOutputs(graph, outputs, flags.outputDir);
  if (flags.repeat > 0) timeRuns(graph, inputs, flags.repeat, flags.warmup);
  return 0;
}

}  // namespace

int kiln::tools::kilnRun(int argc, char** argv) {
  try {
    return run(parseFlags(argc, argv));
  } catch (const UsageError& e) {
    return report(e.what(), 2);
  } catch (const kiln::Error& e) {
    // The message alone: the "(at <file>:<line>)" of a kiln::Error points into kiln-run.
    return report(e.message(), 2);
  } catch (const std::exception& e) {
    return report(e.what(), 1);
  }
}

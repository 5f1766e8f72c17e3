// kiln-fuzz: Kiln's differential fuzzer. Random programs run eagerly and traced under each
// backend and mode, each in a forked child; failures are minimized and printed as C++.
//
//   kiln-fuzz --seed=S --programs=N [--backends=INTERP,MLIR,HALIDE,SCHEDULE]
//             [--modes=value,symbolic,dynamic,dynamic-symbolic] [--dynamic-dims=0|any|two]
//             [--max-ops=K] [--no-backward] [--print-programs] [--jobs=J] [--minimize-budget=B]
//             [--timeout=SECONDS] [--no-fork]
//
// The dynamic modes generate batch programs (every input's dim 0 one batch size) and trace
// each at two batch sizes, so that its recordings merge into a dynamic program, then call
// it at more sizes; with them every mode runs the batch programs. --dynamic-dims=any puts
// the batch at another dim per program (dim 1, the last, a middle one), and two adds a
// second dynamic size (a sequence length) that changes with the batch or alone.
//
// SCHEDULE (test/e2e/ScheduleBackend.cpp, linked in) is the GPU backends' host schedule
// run on the CPU with every fused kernel interpreted: what a program compiled for a GPU
// does with its buffers (arena offsets, in-place results, views, library ops), checked
// against eager on a machine without one.
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "tools/kiln-fuzz/Generator.h"
#include "tools/kiln-fuzz/Isolate.h"
#include "tools/kiln-fuzz/Minimize.h"
#include "tools/kiln-fuzz/Program.h"
#include "tools/kiln-fuzz/Runner.h"

namespace kiln::fuzz {
namespace {

struct Options {
  uint64_t seed = 1;
  int64_t programs = 100;
  std::vector<std::string> backends = {"INTERP", "MLIR", "HALIDE"};
  std::vector<std::string> modes = {"value", "symbolic"};
  GenOptions gen;
  bool printPrograms = false;
  int jobs = 1;
  int minimizeBudget = 60;
  unsigned timeout = 300;
  bool fork = true;  // --no-fork runs each program in this process (for a debugger)
};

std::vector<std::string> split(const std::string& list) {
  std::vector<std::string> items;
  std::stringstream in(list);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) items.push_back(item);
  return items;
}

[[noreturn]] void usage(const std::string& problem) {
  std::cerr << "kiln-fuzz: " << problem
            << "\nusage: kiln-fuzz --seed=S --programs=N [--backends=INTERP,MLIR,HALIDE,SCHEDULE]"
               " [--modes=value,symbolic,dynamic,dynamic-symbolic] [--dynamic-dims=0|any|two] [--wide-dims]"
               " [--in-place]"
               " [--max-ops=K] [--no-backward] [--print-programs] [--jobs=J] [--minimize-budget=B]"
               " [--timeout=SECONDS] [--no-fork]\n";
  std::exit(2);
}

GenOptions::Dims dynamicDims(const std::string& value) {
  if (value == "0") return GenOptions::Dims::First;
  if (value == "any") return GenOptions::Dims::Any;
  if (value == "two") return GenOptions::Dims::Two;
  usage("unknown --dynamic-dims " + value + " (0, any or two)");
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const size_t eq = arg.find('=');
    const std::string name = arg.substr(0, eq), value = eq == std::string::npos ? "" : arg.substr(eq + 1);
    try {
      if (name == "--seed") o.seed = std::stoull(value, nullptr, 0);
      else if (name == "--programs") o.programs = std::stoll(value);
      else if (name == "--backends") o.backends = split(value);
      else if (name == "--modes") o.modes = split(value);
      else if (name == "--dynamic-dims") o.gen.dims = dynamicDims(value);
      else if (name == "--max-ops") o.gen.maxOps = std::stoi(value);
      else if (name == "--no-backward") o.gen.backward = false;
      else if (name == "--wide-dims") o.gen.wideDims = true;
      else if (name == "--in-place") o.gen.inPlace = true;
      else if (name == "--print-programs") o.printPrograms = true;
      else if (name == "--jobs") o.jobs = std::max(1, std::stoi(value));
      else if (name == "--minimize-budget") o.minimizeBudget = std::stoi(value);
      else if (name == "--timeout") o.timeout = unsigned(std::stoul(value));
      else if (name == "--no-fork") o.fork = false;
      else usage("unknown argument " + arg);
    } catch (const std::logic_error&) {
      usage("bad value in " + arg);
    }
  }
  for (const std::string& m : o.modes) {
    if (m != "value" && m != "symbolic" && m != "dynamic" && m != "dynamic-symbolic") usage("unknown mode " + m);
    o.gen.batch = o.gen.batch || m.starts_with("dynamic");
  }
  return o;
}

RunOptions runOptions(const Options& o) {
  RunOptions r;
  for (const std::string& b : o.backends)
    for (const std::string& m : o.modes)
      r.configs.push_back({b, m.ends_with("symbolic"), m.starts_with("dynamic")});
  return r;
}

// ---- problems through the child's report ------------------------------------------------
constexpr char kField = '\x1f', kRecord = '\x1e';

// The dynamic configs' counts travel as one more record, of this kind.
constexpr char kCounts[] = "dynamic counts";

std::string encode(const std::vector<Problem>& problems, const DynamicCounts& counts) {
  std::string out;
  for (const Problem& p : problems) out += p.config + kField + p.kind + kField + p.message + kRecord;
  if (counts.merged + counts.stayedStatic == 0) return out;
  out += std::string() + kField + kCounts + kField + std::to_string(counts.merged) + " " +
         std::to_string(counts.stayedStatic) + kRecord;
  return problems.empty() ? kPassNote + out : out;
}

std::vector<Problem> decodeAll(const std::string& text) {
  std::vector<Problem> problems;
  std::stringstream in(text);
  for (std::string record; std::getline(in, record, kRecord);) {
    const size_t a = record.find(kField), b = record.find(kField, a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    problems.push_back({record.substr(0, a), record.substr(a + 1, b - a - 1), record.substr(b + 1)});
  }
  return problems;
}

std::vector<Problem> decode(const std::string& text) {
  std::vector<Problem> problems = decodeAll(text);
  std::erase_if(problems, [](const Problem& p) { return p.kind == kCounts; });
  return problems;
}

DynamicCounts decodeCounts(const std::string& text) {
  DynamicCounts counts;
  for (const Problem& p : decodeAll(text))
    if (p.kind == kCounts) std::istringstream(p.message) >> counts.merged >> counts.stayedStatic;
  return counts;
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : ",") + item;
  return out;
}

std::string dimsName(GenOptions::Dims dims) {
  return dims == GenOptions::Dims::First ? "0" : dims == GenOptions::Dims::Any ? "any" : "two";
}

// Which inputs' dims are B and S: "x[0] dim 1 B, x[1] dim 0 S".
std::string dynamicDimsText(const Program& p) {
  std::string out;
  for (const Node& n : p.nodes)
    for (size_t d = 0; n.op == Op::Input && d < n.batch.size(); ++d)
      if (follows(n.batch[d]))
        out += (out.empty() ? "x[" : ", x[") + std::to_string(n.slot) + "] dim " + std::to_string(d) +
               (followsB(n.batch[d]) ? " B" : " S");
  return out;
}

std::string describe(const Problem& p) { return p.kind + " under " + p.config + ": " + p.message; }

// ---- one program ----------------------------------------------------------------------
struct Result {
  uint64_t seed = 0;
  Program program;
  ChildOutcome outcome;
};

std::function<std::string()> checkWork(const Program& p, const RunOptions& r) {
  return [p, r] {
    DynamicCounts counts;
    std::vector<Problem> problems = check(p, r, &counts);
    return encode(problems, counts);
  };
}

// Whether `candidate` still fails the way `original` did (same config and kind, or the
// same crash), keeping the last failure's description in `last`.
bool failsAlike(const Program& candidate, const ChildOutcome& original, const RunOptions& all, unsigned timeout,
                std::string& last) {
  if (original.kind == ChildOutcome::Crashed) {
    ChildOutcome o = runInChild(checkWork(candidate, all), timeout);
    if (o.kind != ChildOutcome::Crashed || o.text != original.text) return false;
    last = "crash: " + o.text;
    return true;
  }
  const Problem first = decode(original.text).at(0);
  RunOptions one;
  for (const Config& c : all.configs)
    if (c.name() == first.config) one.configs.push_back(c);
  ChildOutcome o = runInChild(checkWork(candidate, one), timeout);
  if (o.kind != ChildOutcome::Failed) return false;
  const std::vector<Problem> got = decode(o.text);
  if (got.empty() || got[0].config != first.config || got[0].kind != first.kind) return false;
  last = describe(got[0]);
  return true;
}

// The configs a crash happens under alone: minimizing then runs only the first of them.
RunOptions crashingConfigs(const Result& r, const Options& o, const RunOptions& all) {
  RunOptions crashing;
  for (const Config& c : all.configs) {
    RunOptions one{.configs = {c}, .calls = all.calls};
    if (runInChild(checkWork(r.program, one), o.timeout).kind == ChildOutcome::Crashed) crashing.configs.push_back(c);
  }
  return crashing.configs.empty() ? all : crashing;
}

void report(const Result& r, const Options& o, const RunOptions& runAll) {
  RunOptions all = runAll;
  std::string first;
  if (r.outcome.kind == ChildOutcome::Crashed) {
    all = crashingConfigs(r, o, runAll);  // no crash without fork: o.fork holds here
    first = "crash: " + r.outcome.text + " under";
    for (const Config& c : all.configs) first += " " + c.name() + (&c == &all.configs.back() ? "" : ",");
    all.configs.resize(1);
  } else
    for (const Problem& p : decode(r.outcome.text)) first += (first.empty() ? "" : "\n  also ") + describe(p);
  std::cout << "\nkiln-fuzz: seed " << r.seed << ": " << first << "\n";
  std::string last = r.outcome.kind == ChildOutcome::Crashed ? first : describe(decode(r.outcome.text).at(0));
  int tries = 0;
  Program small = minimize(r.program, [&](const Program& c) {
    ++tries;
    return failsAlike(c, r.outcome, all, o.timeout, last);
  }, o.fork ? o.minimizeBudget : 0);  // children may not fork from a process that ran Kiln
  std::ostringstream comment;
  comment << "// kiln-fuzz --seed=" << r.seed << " --programs=1"
          << (o.gen.backward ? "" : " --no-backward") << (o.gen.wideDims ? " --wide-dims" : "")
          << (o.gen.inPlace ? " --in-place" : "") << " --max-ops=" << o.gen.maxOps
          << (o.gen.batch ? " --modes=" + join(o.modes) + " --backends=" + join(o.backends) : "")
          << (o.gen.batch && o.gen.dims != GenOptions::Dims::First ? " --dynamic-dims=" + dimsName(o.gen.dims) : "")
          << "\n"
          << "// minimized from " << countOps(r.program) << " to " << countOps(small) << " ops (" << tries
          << " tries): " << last << "\n";
  if (small.batch > 0) {
    comment << "// A batch program, printed at B = " << small.batch;
    if (small.seq > 0) comment << " and S = " << small.seq;
    comment << " (the inputs' dims that follow them: " << dynamicDimsText(small) << "); dynamic configs call it at";
    for (CallSizes c : dynamicBatches(small))
      comment << " " << (small.seq > 0 ? "(" + std::to_string(c.batch) + ", " + std::to_string(c.seq) + ")" : std::to_string(c.batch));
    comment << ", in that order.\n";
  }
  comment << "// Paste into regressions() in test/e2e/OpCases.cpp"
          << (gradParams(small).empty() ? "" : " (with kiln/optim/SGD.h and //frontend:optim)") << ".\n";
  std::cout << printCase(small, "fuzz_" + std::to_string(r.seed), comment.str());
}

int run(const Options& o) {
  setenv("KILN_CACHE_DIR", "off", 1);
  const RunOptions all = runOptions(o);
  std::vector<Result> failures;
  DynamicCounts counts;
  std::map<pid_t, std::pair<Child, Result>> running;
  const auto start = std::chrono::steady_clock::now();
  int64_t next = 0;
  while (next < o.programs || !running.empty()) {
    while (next < o.programs && int(running.size()) < o.jobs) {
      Result r;
      r.seed = o.seed + uint64_t(next++);
      r.program = generate(r.seed, o.gen);
      if (o.printPrograms)
        std::cout << printCase(r.program, "fuzz_" + std::to_string(r.seed),
                               "// seed " + std::to_string(r.seed) +
                                   (r.program.batch > 0 ? ": " + dynamicDimsText(r.program) : "") + "\n");
      if (!o.fork) {
        std::vector<Problem> problems = check(r.program, all, &counts);
        r.outcome = {problems.empty() ? ChildOutcome::Passed : ChildOutcome::Failed, encode(problems, {})};
        if (!problems.empty()) failures.push_back(std::move(r));
        continue;
      }
      Child c = Child::start(checkWork(r.program, all), o.timeout);
      running.emplace(c.pid(), std::make_pair(c, std::move(r)));
    }
    if (running.empty()) continue;
    int status = 0;
    const pid_t pid = waitpid(-1, &status, 0);
    auto it = running.find(pid);
    if (it == running.end()) continue;
    Result r = std::move(it->second.second);
    r.outcome = it->second.first.finish(status);
    running.erase(it);
    if (r.outcome.kind != ChildOutcome::Crashed) {
      const DynamicCounts c = decodeCounts(r.outcome.text);
      counts.merged += c.merged;
      counts.stayedStatic += c.stayedStatic;
    }
    if (r.outcome.kind != ChildOutcome::Passed) {
      std::cout << "kiln-fuzz: seed " << r.seed << " fails; minimized below" << std::endl;
      failures.push_back(std::move(r));
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  int mismatches = 0, crashes = 0;
  std::sort(failures.begin(), failures.end(), [](const Result& a, const Result& b) { return a.seed < b.seed; });
  for (const Result& r : failures) {
    (r.outcome.kind == ChildOutcome::Crashed ? crashes : mismatches)++;
    report(r, o, all);
  }
  std::cout << "kiln-fuzz: checked in " << seconds << " s (" << double(o.programs) / seconds << " programs/s)\n";
  std::cout << "kiln-fuzz: " << o.programs << " programs, " << mismatches << " mismatches, " << crashes
            << " crashes (seeds " << o.seed << ".." << o.seed + uint64_t(std::max<int64_t>(o.programs, 1) - 1)
            << ")\n";
  if (o.gen.batch)
    std::cout << "kiln-fuzz: dynamic configs: " << counts.merged << " merged their two recordings, "
              << counts.stayedStatic << " stayed static (a recording per batch size)\n";
  return mismatches + crashes == 0 ? 0 : 1;
}

}  // namespace
}  // namespace kiln::fuzz

int main(int argc, char** argv) { return kiln::fuzz::run(kiln::fuzz::parse(argc, argv)); }

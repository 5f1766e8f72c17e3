// Candidate reductions of a program, tried smallest-effect-last until none still fails.
#include "tools/kiln-fuzz/Minimize.h"

#include <algorithm>
#include <map>
#include <optional>

#include "tools/kiln-fuzz/Analysis.h"

namespace kiln::fuzz {

namespace {

// Every use of node `from` (operands and outputs) reads node `to` instead.
Program replaceUses(Program p, int from, int to) {
  for (Node& n : p.nodes)
    for (int& a : n.args)
      if (a == from) a = to;
  for (int& o : p.outputs)
    if (o == from) o = to;
  return p;
}

// Node `n` becomes a new input of the same shape and dtype, filled by `fill`. In a batch
// program a value of fixed shape becomes state, and one whose sizes no input could hold
// (isInputBatch: a multiple of B or S, or either twice) cannot be cut.
std::optional<Program> cut(Program p, int n, Fill fill) {
  Node& node = p.nodes[size_t(n)];
  Node leaf;
  leaf.op = Op::Input;
  if (p.batch > 0) {
    if (std::none_of(node.batch.begin(), node.batch.end(), follows)) leaf.op = Op::State;
    else if (!isInputBatch(node.batch)) return std::nullopt;
  }
  int slots = 0;
  for (const Node& other : p.nodes)
    if (other.op == leaf.op) slots = std::max(slots, other.slot + 1);
  leaf.slot = slots;
  leaf.fill = fill;
  leaf.shape = node.shape;
  leaf.batch = node.batch;
  leaf.dtype = node.dtype;
  node = leaf;
  return p;
}

std::vector<Program> candidates(const Program& p) {
  std::vector<Program> out;
  for (size_t j = 0; p.outputs.size() > 1 && j < p.outputs.size(); ++j) {
    Program c = p;
    c.outputs.erase(c.outputs.begin() + int64_t(j));
    out.push_back(c);
  }
  if (p.backward) {
    Program c = p;
    c.backward = false;
    out.push_back(c);
  }
  for (int n = int(p.nodes.size()) - 1; n >= 0; --n) {
    const Node& node = p.nodes[size_t(n)];
    if (isLeaf(node.op)) continue;
    for (int a : node.args) {
      const Node& arg = p.nodes[size_t(a)];
      if (arg.shape == node.shape && arg.batch == node.batch && arg.dtype == node.dtype)
        out.push_back(replaceUses(p, n, a));
    }
    if (!isFloatingPoint(node.dtype)) continue;
    for (Fill fill : {Fill::Normal, Fill::Positive})  // Positive for divisors and logarithms
      if (std::optional<Program> c = cut(p, n, fill)) out.push_back(std::move(*c));
  }
  return out;
}

bool sameNode(const Node& a, const Node& b) {
  return a.op == b.op && a.args == b.args && a.ints == b.ints && a.scalar == b.scalar && a.flag == b.flag &&
         a.fill == b.fill && a.high == b.high && a.slot == b.slot && a.shape == b.shape && a.batch == b.batch &&
         a.dtype == b.dtype;
}

bool same(const Program& a, const Program& b) {
  return a.backward == b.backward && a.batch == b.batch && a.seq == b.seq && a.outputs == b.outputs && a.nodes.size() == b.nodes.size() &&
         std::equal(a.nodes.begin(), a.nodes.end(), b.nodes.begin(), sameNode);
}

// Whether each dynamic size that some value follows is an input's: the traced function
// reads its sizes from its inputs.
bool sizesFromInputs(const Program& p) {
  for (int64_t f : {int64_t(1), int64_t(-1)}) {
    const bool used = std::any_of(p.nodes.begin(), p.nodes.end(), [&](const Node& n) {
      return std::any_of(n.batch.begin(), n.batch.end(), [&](int64_t g) { return f > 0 ? followsB(g) : followsS(g); });
    });
    if ((used || f > 0) && sizeSource(p, f).first < 0) return false;
  }
  return true;
}

}  // namespace

Program compact(const Program& p) {
  std::vector<bool> live(p.nodes.size(), false);
  for (int o : p.outputs) live[size_t(o)] = true;
  for (size_t n = p.nodes.size(); n-- > 0;)
    if (live[n])
      for (int a : p.nodes[n].args) {
        live[size_t(a)] = true;
        // batch_norm and in_place write state in place, so a later reader of that
        // state needs them though nothing reads their output (seed 109737's reproducer
        // lacked the batch_norm that mattered).
        for (size_t m = 0; m < n; ++m) {
          const std::vector<int> written = writtenOperands(p.nodes[m]);
          if (std::find(written.begin(), written.end(), a) != written.end()) live[m] = true;
        }
      }
  Program c;
  c.seed = p.seed;
  c.backward = p.backward;
  c.batch = p.batch;
  c.seq = p.seq;
  std::vector<int> index(p.nodes.size(), -1);
  std::map<int, int> inputs, states;  // old slot to new, in order
  for (size_t n = 0; n < p.nodes.size(); ++n)
    if (live[n] && p.nodes[n].op == Op::Input) inputs.emplace(p.nodes[n].slot, 0);
    else if (live[n] && p.nodes[n].op == Op::State) states.emplace(p.nodes[n].slot, 0);
  int k = 0;
  for (auto& [slot, renumbered] : inputs) renumbered = k++;
  k = 0;
  for (auto& [slot, renumbered] : states) renumbered = k++;
  for (size_t n = 0; n < p.nodes.size(); ++n) {
    if (!live[n]) continue;
    Node node = p.nodes[n];
    for (int& a : node.args) a = index[size_t(a)];
    if (node.op == Op::Input) node.slot = inputs[node.slot];
    if (node.op == Op::State) node.slot = states[node.slot];
    index[n] = int(c.nodes.size());
    c.nodes.push_back(node);
  }
  for (int o : p.outputs) c.outputs.push_back(index[size_t(o)]);
  if (gradParams(c).empty()) c.backward = false;
  return c;
}

Program minimize(Program p, const std::function<bool(const Program&)>& fails, int budget) {
  p = compact(p);
  for (bool progress = true; progress && budget > 0;) {
    progress = false;
    for (const Program& raw : candidates(p)) {
      Program c = compact(raw);
      if (same(c, p) || !wellConditioned(c)) continue;
      if (c.batch > 0 && !sizesFromInputs(c)) continue;
      if (budget-- <= 0) break;
      if (fails(c)) {
        p = c;
        progress = true;
        break;
      }
    }
  }
  return p;
}

}  // namespace kiln::fuzz

// The op table behind evaluate() and printCase(): each op's Kiln call and its C++ text side
// by side, so what runs and what a reproducer prints cannot drift apart.
#include "tools/kiln-fuzz/Program.h"

#include <algorithm>
#include <charconv>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include "kiln/core/Functional.h"
#include "kiln/core/Ops.h"
#include "kiln/core/Random.h"
#include "kiln/optim/SGD.h"

namespace kiln::fuzz {

namespace {

using Args = std::vector<Tensor>;
using Texts = std::vector<std::string>;

std::string str(const Shape& s) {
  std::string out = "{";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "}";
}

std::string str(double v) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  std::string s(buf, end);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

std::string str(bool b) { return b ? "true" : "false"; }
std::string str(int64_t v) { return std::to_string(v); }
std::string dtypeName(DType d) { return d == kFloat64 ? "kFloat64" : "kFloat32"; }

// Whether the size of `n`'s dim `d` follows B or S.
bool followsBatch(const Node& n, size_t d) { return d < n.batch.size() && follows(n.batch[d]); }

// A reshape's or view's sizes, those that follow B or S written in terms of them.
std::string sizes(const Node& n) {
  std::string out = "{";
  for (size_t i = 0; i < n.ints.size(); ++i) {
    std::string size = str(n.ints[i]);
    if (n.ints[i] != -1 && followsBatch(n, i)) {
      const std::string name = followsB(n.batch[i]) ? "B" : "S";
      const int64_t c = followsB(n.batch[i]) ? n.batch[i] : -n.batch[i];
      size = c == 1 ? name : name + " * " + str(c);
    }
    out += (i ? ", " : "") + size;
  }
  return out + "}";
}

// An optional operand: the node's k-th argument, or an undefined tensor.
Tensor opt(const Args& a, size_t k) { return k < a.size() ? a[k] : Tensor(); }
std::string opt(const Texts& a, size_t k) { return k < a.size() ? a[k] : "Tensor()"; }

// A state or value written in place (Op::InPlace), as a module's buffer is: the value is
// detached, as a running statistic's is, and the target stays within its range.
Tensor writeInPlace(const Node& n, Tensor s, const Tensor& value) {
  const Tensor v = value.detach();
  switch (InPlaceKind(n.ints[0])) {
    case InPlaceKind::Average: s.mul_(1 - n.scalar).add_(v, n.scalar); break;
    case InPlaceKind::TowardBy: s.sub_(sub(s, v), n.scalar); break;
    case InPlaceKind::Copy: s.copy_(v); break;
  }
  return s;
}

struct OpDesc {
  const char* name;
  Tensor (*eval)(const Node& n, const Args& a);
  std::string (*print)(const Node& n, const Texts& a);
};

#define UNARY(fn) \
  {#fn, [](const Node&, const Args& a) { return fn(a[0]); }, \
   [](const Node&, const Texts& a) { return std::string(#fn "(") + a[0] + ")"; }}
#define BINARY(fn) \
  {#fn, [](const Node&, const Args& a) { return fn(a[0], a[1]); }, \
   [](const Node&, const Texts& a) { return std::string(#fn "(") + a[0] + ", " + a[1] + ")"; }}
#define WITH_SCALAR(name, fn) \
  {name, [](const Node& n, const Args& a) { return fn(a[0], n.scalar); }, \
   [](const Node& n, const Texts& a) { return std::string(#fn "(") + a[0] + ", " + str(n.scalar) + ")"; }}
#define REDUCE(fn) \
  {#fn, [](const Node& n, const Args& a) { return fn(a[0], n.ints, n.flag); }, \
   [](const Node& n, const Texts& a) { return std::string(#fn "(") + a[0] + ", " + str(n.ints) + ", " + str(n.flag) + ")"; }}
#define METHOD1(name, method) \
  {name, [](const Node& n, const Args& a) { return a[0].method(n.ints[0]); }, \
   [](const Node& n, const Texts& a) { return a[0] + "." #method "(" + str(n.ints[0]) + ")"; }}
#define POOL(fn) \
  {#fn, [](const Node& n, const Args& a) { return fn(a[0], {n.ints[0]}, {n.ints[1]}, {n.ints[2]}); }, \
   [](const Node& n, const Texts& a) { \
     return std::string(#fn "(") + a[0] + ", {" + str(n.ints[0]) + "}, {" + str(n.ints[1]) + "}, {" + str(n.ints[2]) + "})"; }}

// Indexed by Op. Attributes: reductions ints = dims, flag = keepdim; softmax ints = {dim};
// layer_norm ints = normalized shape, args x[, weight, bias]; batch_norm args x, running
// mean, running var[, weight, bias], scalar = momentum; conv2d ints = {stride, padding,
// groups}, args x, weight[, bias]; pools ints = {kernel, stride, padding}; slice ints =
// {dim, start, end, step}; flatten ints = {start, end}; cat and gather ints = {dim};
// in_place ints = {InPlaceKind}, scalar = the weight of the value.
const OpDesc kOps[] = {
    {"input", nullptr, nullptr},
    {"state", nullptr, nullptr},
    UNARY(neg), UNARY(abs), UNARY(exp), UNARY(log), UNARY(sqrt), UNARY(rsqrt), UNARY(tanh),
    UNARY(sigmoid), UNARY(relu), UNARY(sin), UNARY(cos),
    BINARY(add), BINARY(sub), BINARY(mul), BINARY(div), BINARY(maximum), BINARY(minimum),
    WITH_SCALAR("add_scalar", add), WITH_SCALAR("mul_scalar", mul), WITH_SCALAR("pow_scalar", pow),
    {"where", [](const Node&, const Args& a) { return where(a[0], a[1], a[2]); },
     [](const Node&, const Texts& a) { return "where(" + a[0] + ", " + a[1] + ", " + a[2] + ")"; }},
    REDUCE(sum), REDUCE(mean), REDUCE(amax), REDUCE(amin),
    {"softmax", [](const Node& n, const Args& a) { return softmax(a[0], n.ints[0]); },
     [](const Node& n, const Texts& a) { return "softmax(" + a[0] + ", " + str(n.ints[0]) + ")"; }},
    {"log_softmax", [](const Node& n, const Args& a) { return log_softmax(a[0], n.ints[0]); },
     [](const Node& n, const Texts& a) { return "log_softmax(" + a[0] + ", " + str(n.ints[0]) + ")"; }},
    {"layer_norm", [](const Node& n, const Args& a) { return layer_norm(a[0], n.ints, opt(a, 1), opt(a, 2)); },
     [](const Node& n, const Texts& a) {
       if (a.size() == 1) return "layer_norm(" + a[0] + ", " + str(n.ints) + ")";
       return "layer_norm(" + a[0] + ", " + str(n.ints) + ", " + a[1] + ", " + a[2] + ")"; }},
    {"batch_norm",
     [](const Node& n, const Args& a) { return batch_norm(a[0], a[1], a[2], opt(a, 3), opt(a, 4), true, n.scalar); },
     [](const Node& n, const Texts& a) {
       return "batch_norm(" + a[0] + ", " + a[1] + ", " + a[2] + ", " + opt(a, 3) + ", " + opt(a, 4) +
              ", true, " + str(n.scalar) + ")"; }},
    BINARY(matmul),
    {"addmm", [](const Node&, const Args& a) { return addmm(a[0], a[1], a[2]); },
     [](const Node&, const Texts& a) { return "addmm(" + a[0] + ", " + a[1] + ", " + a[2] + ")"; }},
    {"reshape", [](const Node& n, const Args& a) { return a[0].reshape(n.ints); },
     [](const Node& n, const Texts& a) { return a[0] + ".reshape(" + sizes(n) + ")"; }},
    {"view", [](const Node& n, const Args& a) { return a[0].view(n.ints); },
     [](const Node& n, const Texts& a) { return a[0] + ".view(" + sizes(n) + ")"; }},
    METHOD1("unsqueeze", unsqueeze), METHOD1("squeeze", squeeze),
    {"flatten", [](const Node& n, const Args& a) { return a[0].flatten(n.ints[0], n.ints[1]); },
     [](const Node& n, const Texts& a) { return a[0] + ".flatten(" + str(n.ints[0]) + ", " + str(n.ints[1]) + ")"; }},
    {"transpose", [](const Node& n, const Args& a) { return a[0].transpose(n.ints[0], n.ints[1]); },
     [](const Node& n, const Texts& a) { return a[0] + ".transpose(" + str(n.ints[0]) + ", " + str(n.ints[1]) + ")"; }},
    {"permute", [](const Node& n, const Args& a) { return a[0].permute(n.ints); },
     [](const Node& n, const Texts& a) { return a[0] + ".permute(" + str(n.ints) + ")"; }},
    {"slice", [](const Node& n, const Args& a) { return a[0].slice(n.ints[0], n.ints[1], n.ints[2], n.ints[3]); },
     [](const Node& n, const Texts& a) {
       return a[0] + ".slice(" + str(n.ints[0]) + ", " + str(n.ints[1]) + ", " + str(n.ints[2]) + ", " + str(n.ints[3]) + ")"; }},
    {"contiguous", [](const Node&, const Args& a) { return a[0].contiguous(); },
     [](const Node&, const Texts& a) { return a[0] + ".contiguous()"; }},
    {"cat", [](const Node& n, const Args& a) { return cat(a, n.ints[0]); },
     [](const Node& n, const Texts& a) {
       std::string list;
       for (const std::string& t : a) list += (list.empty() ? "" : ", ") + t;
       return "cat({" + list + "}, " + str(n.ints[0]) + ")"; }},
    {"gather", [](const Node& n, const Args& a) { return gather(a[0], n.ints[0], a[1]); },
     [](const Node& n, const Texts& a) { return "gather(" + a[0] + ", " + str(n.ints[0]) + ", " + a[1] + ")"; }},
    {"conv2d",
     [](const Node& n, const Args& a) { return conv2d(a[0], a[1], opt(a, 2), {n.ints[0]}, {n.ints[1]}, {1}, n.ints[2]); },
     [](const Node& n, const Texts& a) {
       return "conv2d(" + a[0] + ", " + a[1] + ", " + opt(a, 2) + ", {" + str(n.ints[0]) + "}, {" + str(n.ints[1]) +
              "}, {1}, " + str(n.ints[2]) + ")"; }},
    POOL(max_pool2d), POOL(avg_pool2d),
    {"convert", [](const Node& n, const Args& a) { return a[0].to(n.dtype); },
     [](const Node& n, const Texts& a) { return a[0] + ".to(" + dtypeName(n.dtype) + ")"; }},
    {"in_place", [](const Node& n, const Args& a) { return writeInPlace(n, a[0], a[1]); },
     [](const Node& n, const Texts& a) {
       const std::string v = a[1] + ".detach()";
       switch (InPlaceKind(n.ints[0])) {
         case InPlaceKind::Average: return a[0] + ".mul_(" + str(1 - n.scalar) + ").add_(" + v + ", " + str(n.scalar) + ")";
         case InPlaceKind::TowardBy: return a[0] + ".sub_(sub(" + a[0] + ", " + v + "), " + str(n.scalar) + ")";
         case InPlaceKind::Copy: break;
       }
       return a[0] + ".copy_(" + v + ")"; }},
};
static_assert(std::size(kOps) == size_t(Op::InPlace) + 1, "one table row per Op");

#undef UNARY
#undef BINARY
#undef WITH_SCALAR
#undef REDUCE
#undef METHOD1
#undef POOL

const OpDesc& desc(Op op) { return kOps[size_t(op)]; }

std::string printMaker(const Leaf& leaf) {
  std::string dtype = leaf.dtype == kFloat32 ? "" : ", " + dtypeName(leaf.dtype);
  std::string maker;
  switch (leaf.fill) {
    case Fill::Normal: maker = "normal(" + str(leaf.shape) + dtype + ")"; break;
    case Fill::Positive: maker = "positive(" + str(leaf.shape) + dtype + ")"; break;
    case Fill::Ints: maker = "ints(0, " + str(leaf.high) + ", " + str(leaf.shape) + ")"; break;
    case Fill::Bools: maker = "bools(" + str(leaf.shape) + ")"; break;
  }
  if (!leaf.requiresGrad) return maker;
  return "[](uint64_t seed) { return " + maker + "(seed).requires_grad_(); }";
}

std::string printMakers(const std::vector<Leaf>& leaves) {
  std::string out = "{";
  for (size_t i = 0; i < leaves.size(); ++i) out += (i ? ", " : "") + printMaker(leaves[i]);
  return out + "}";
}

std::string valueName(const Program& p, int n) {
  const Node& node = p.nodes[size_t(n)];
  if (node.op == Op::Input) return "x[" + std::to_string(node.slot) + "]";
  if (node.op == Op::State) return "s[" + std::to_string(node.slot) + "]";
  return "v" + std::to_string(n);
}

int numStates(const Program& p) {
  int n = 0;
  for (const Node& node : p.nodes)
    if (node.op == Op::State) n = std::max(n, node.slot + 1);
  return n;
}

}  // namespace

bool isLeaf(Op op) { return op == Op::Input || op == Op::State; }
bool isParam(const Node& node) { return node.op == Op::State && node.flag; }
const char* opName(Op op) { return desc(op).name; }

bool mayShareStorage(Op op) {
  switch (op) {
    case Op::Input: case Op::State: case Op::Reshape: case Op::View: case Op::Unsqueeze: case Op::Squeeze:
    case Op::Flatten: case Op::Transpose: case Op::Permute: case Op::Slice: case Op::Contiguous:
    case Op::InPlace: return true;
    default: return false;
  }
}

std::vector<int> writtenOperands(const Node& node) {
  if (node.op == Op::InPlace) return {node.args[0]};
  if (node.op == Op::BatchNorm && node.args.size() > 2) return {node.args[1], node.args[2]};
  return {};
}

int countOps(const Program& p) {
  int n = 0;
  for (const Node& node : p.nodes) n += !isLeaf(node.op);
  return n;
}

std::vector<Leaf> inputLeaves(const Program& p) {
  std::vector<Leaf> leaves;
  for (const Node& n : p.nodes)
    if (n.op == Op::Input) {
      if (size_t(n.slot) >= leaves.size()) leaves.resize(size_t(n.slot) + 1);
      leaves[size_t(n.slot)] = {n.fill, n.shape, n.dtype, n.high, false};
    }
  return leaves;
}

std::vector<Leaf> stateLeaves(const Program& p) {
  std::vector<Leaf> leaves(size_t(numStates(p)));
  for (const Node& n : p.nodes)
    if (n.op == Op::State) leaves[size_t(n.slot)] = {n.fill, n.shape, n.dtype, n.high, n.flag};
  if (p.backward)
    for (int out : p.outputs) {  // a weight broadcasts over dims that follow the batch
      const Node& n = p.nodes[size_t(out)];
      Shape shape = n.shape;
      for (size_t d = 0; d < shape.size(); ++d)
        if (followsBatch(n, d)) shape[d] = 1;
      leaves.push_back({Fill::Normal, shape, n.dtype, 0, false});
    }
  return leaves;
}

bool isInputBatch(const Shape& batch) {
  const auto count = [&](int64_t f) { return std::count(batch.begin(), batch.end(), f); };
  return count(1) + count(-1) + count(0) == int64_t(batch.size()) && count(1) <= 1 && count(-1) <= 1 &&
         count(0) < int64_t(batch.size());
}

std::pair<int, int64_t> sizeSource(const Program& p, int64_t f) {
  std::pair<int, int64_t> found{-1, -1};
  for (const Node& n : p.nodes) {
    if (n.op != Op::Input || (found.first >= 0 && found.first < n.slot)) continue;
    for (size_t d = 0; d < n.batch.size(); ++d)
      if (n.batch[d] == f) found = {n.slot, int64_t(d)};
  }
  return found;
}

std::vector<CallSizes> dynamicBatches(const Program& p) {
  const int64_t b = p.batch, s = p.seq, l = kLargestBatch;
  if (s == 0) return {{b}, {2 * b}, {2}, {2}, {9}, {9}, {13}, {13}, {l}, {l}, {2 * b}, {b}};
  return {{b, s}, {2 * b, 3 * s}, {2, s}, {2, s}, {b, 9}, {b, 9}, {13, 2}, {13, 2}, {l, l}, {l, l},
          {2 * b, 3 * s}, {b, s}};
}

Node atBatch(Node n, int64_t b, int64_t s) {
  for (size_t d = 0; d < n.shape.size(); ++d) {
    if (!followsBatch(n, d)) continue;
    n.shape[d] = sizeAt(n.batch[d], b, s);
    if ((n.op == Op::Reshape || n.op == Op::View) && n.ints[d] != -1) n.ints[d] = n.shape[d];
  }
  return n;
}

Program atBatch(Program p, int64_t b, int64_t s) {
  if (p.batch == 0) return p;
  p.batch = b;
  if (p.seq > 0) p.seq = s;
  for (Node& n : p.nodes) n = atBatch(std::move(n), b, s);
  return p;
}

Program atBatch(Program p, CallSizes sizes) { return atBatch(std::move(p), sizes.batch, sizes.seq); }

Tensor makeLeaf(const Leaf& leaf, uint64_t seed, std::optional<DType> as) {
  manual_seed(seed);
  Tensor t;
  switch (leaf.fill) {
    case Fill::Normal: t = randn(leaf.shape, leaf.dtype); break;
    case Fill::Positive: t = add(abs(randn(leaf.shape, leaf.dtype)), 0.5); break;
    case Fill::Ints: t = randint(0, leaf.high, leaf.shape); break;
    case Fill::Bools: t = gt(randn(leaf.shape), 0.0); break;
  }
  if (as && isFloatingPoint(t.dtype())) t = convert(t, *as);
  if (leaf.requiresGrad) t.requires_grad_();
  return t;
}

std::vector<std::vector<bool>> dependencies(const Program& p) {
  std::vector<std::vector<bool>> deps(p.nodes.size(), std::vector<bool>(p.nodes.size(), false));
  for (size_t n = 0; n < p.nodes.size(); ++n) {
    deps[n][n] = true;
    const std::vector<int>& args = p.nodes[n].args;
    for (int a : p.nodes[n].op == Op::InPlace ? std::vector<int>{args[0]} : args)
      for (size_t m = 0; m < p.nodes.size(); ++m)
        if (deps[size_t(a)][m]) deps[n][m] = true;
  }
  return deps;
}

std::vector<int> gradParams(const Program& p) {
  if (!p.backward) return {};
  std::vector<std::vector<bool>> deps = dependencies(p);
  std::vector<int> params;
  for (size_t n = 0; n < p.nodes.size(); ++n) {
    if (!isParam(p.nodes[n])) continue;
    for (int out : p.outputs)
      if (deps[size_t(out)][n]) {
        params.push_back(int(n));
        break;
      }
  }
  return params;
}

Tensors evaluate(const Program& p, const Tensors& inputs, const Tensors& state, std::optional<DType> as,
                 Tensors* nodeValues) {
  std::vector<int> params = gradParams(p);
  if (!params.empty()) {  // gradients start absent on every call, as a training step's do
    Tensors leaves;
    for (int n : params) leaves.push_back(state[size_t(p.nodes[size_t(n)].slot)]);
    optim::SGD(leaves, optim::SGDOptions(0.1)).zero_grad(true);
  }
  Tensors values(p.nodes.size());
  for (size_t n = 0; n < p.nodes.size(); ++n) {
    const Node& node = p.nodes[n];
    if (node.op == Op::Input) values[n] = inputs[size_t(node.slot)];
    else if (node.op == Op::State) values[n] = state[size_t(node.slot)];
    else {
      Args args;
      for (int a : node.args) args.push_back(values[size_t(a)]);
      Node resolved = node;
      if (as && node.op == Op::Convert) resolved.dtype = *as;
      values[n] = desc(node.op).eval(resolved, args);
    }
  }
  Tensors outputs;
  for (int out : p.outputs) outputs.push_back(values[size_t(out)]);
  if (nodeValues) *nodeValues = values;
  if (params.empty()) return outputs;
  const size_t weights = state.size() - p.outputs.size();
  Tensor loss;
  for (size_t k = 0; k < outputs.size(); ++k) {
    Tensor term = sum(mul(outputs[k], state[weights + k]));
    loss = loss.defined() ? add(loss, term) : term;
  }
  loss.backward();
  for (int n : params) outputs.push_back(state[size_t(p.nodes[size_t(n)].slot)].grad());
  return outputs;
}

std::string printCase(const Program& p, const std::string& name, const std::string& comment) {
  std::ostringstream out;
  std::vector<Leaf> states = stateLeaves(p);
  std::vector<int> params = gradParams(p);
  out << comment;
  if (states.empty()) out << "op(\"" << name << "\", " << printMakers(inputLeaves(p)) << ",\n   [](X x) {\n";
  else
    out << "withState(\"" << name << "\", " << printMakers(inputLeaves(p)) << ",\n          "
        << printMakers(states) << ",\n          [](X x, Tensors s) {\n";
  bool usesB = false, usesS = false;
  for (const Node& node : p.nodes)
    for (size_t d = 0; d < node.ints.size(); ++d)
      if ((node.op == Op::Reshape || node.op == Op::View) && node.ints[d] != -1 && followsBatch(node, d))
        (followsB(node.batch[d]) ? usesB : usesS) = true;
  for (const auto& [used, f, what] : {std::tuple{usesB, int64_t(1), "B, the batch"},
                                      std::tuple{usesS, int64_t(-1), "S, the second dynamic size"}}) {
    const auto [slot, dim] = sizeSource(p, f);
    if (used) out << "  const int64_t " << what[0] << " = x[" << slot << "].size(" << dim << ");  // " << what << "\n";
  }
  if (!params.empty()) {
    out << "  optim::SGD(Tensors{";
    for (size_t i = 0; i < params.size(); ++i) out << (i ? ", " : "") << valueName(p, params[i]);
    out << "}, optim::SGDOptions(0.1)).zero_grad(true);\n";
  }
  for (size_t n = 0; n < p.nodes.size(); ++n) {
    const Node& node = p.nodes[n];
    if (isLeaf(node.op)) continue;
    Texts args;
    for (int a : node.args) args.push_back(valueName(p, a));
    out << "  Tensor v" << n << " = " << desc(node.op).print(node, args) << ";\n";
  }
  std::string results;
  for (int o : p.outputs) results += (results.empty() ? "" : ", ") + valueName(p, o);
  if (!params.empty()) {
    const size_t weights = states.size() - p.outputs.size();
    out << "  Tensor loss = ";
    for (size_t k = 0; k < p.outputs.size(); ++k)
      out << (k ? " + " : "") << "sum(mul(" << valueName(p, p.outputs[k]) << ", s[" << weights + k << "]))";
    out << ";\n  loss.backward();\n";
    for (int n : params) results += ", " + valueName(p, n) + ".grad()";
  }
  out << "  return Tensors{" << results << "};\n}),\n";
  return out.str();
}

}  // namespace kiln::fuzz

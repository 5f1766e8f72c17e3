// The program generator: draws ops by weight, picks operands among earlier values or new
// leaves of fitting shapes, and inserts guards (abs + 0.5, power-of-two rescales) where an
// op would leave its well-conditioned domain.
#include "tools/kiln-fuzz/Generator.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "tools/kiln-fuzz/Analysis.h"

namespace kiln::fuzz {

namespace {

constexpr int64_t kMaxNumel = 2048;
constexpr int64_t kMaxNumelAtLargestBatch = int64_t(1) << 16;
constexpr int64_t kDims[] = {1, 2, 3, 4, 5, 6, 7, 8, 11, 13, 17, 20, 33};
// --wide-dims: also rows of 128 floats and more, which code generators treat apart (HALIDE
// vectorizes them eight vectors per iteration) and which kDims never reaches.
constexpr int64_t kWideDims[] = {1, 2, 3, 4, 5, 6, 7, 8, 11, 13, 17, 20, 33, 128, 133};

int64_t numel(const Shape& s) { return std::accumulate(s.begin(), s.end(), int64_t(1), std::multiplies<>()); }

// splitmix64: the same stream on every platform, unlike std's distributions.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  int64_t below(int64_t n) { return n <= 1 ? 0 : int64_t(next() % uint64_t(n)); }
  int64_t between(int64_t lo, int64_t hi) { return lo + below(hi - lo + 1); }  // inclusive
  bool chance(int percent) { return below(100) < percent; }
  template <class T, size_t N>
  T pick(const T (&items)[N]) { return items[below(N)]; }

 private:
  uint64_t state_;
};

// A shape with its batch factors (Node::batch): a size follows the batch when its factor
// is above 0, so two sizes are the same only when both parts are.
struct Dims {
  Shape shape, batch;
  size_t rank() const { return shape.size(); }
};

// The broadcast of `a` and `b` (a fixed 1 stretches to the other size), if they have one.
bool broadcastable(const Dims& a, const Dims& b, Dims& out) {
  const size_t rank = std::max(a.rank(), b.rank());
  out.shape.assign(rank, 1);
  out.batch.assign(rank, 0);
  for (size_t i = 0; i < rank; ++i) {
    const bool inA = i < a.rank(), inB = i < b.rank();
    const int64_t x = inA ? a.shape[a.rank() - 1 - i] : 1, y = inB ? b.shape[b.rank() - 1 - i] : 1;
    const int64_t fx = inA ? a.batch[a.rank() - 1 - i] : 0, fy = inB ? b.batch[b.rank() - 1 - i] : 0;
    const size_t o = rank - 1 - i;
    if (x == y && fx == fy) out.shape[o] = x, out.batch[o] = fx;
    else if (x == 1 && fx == 0) out.shape[o] = y, out.batch[o] = fy;
    else if (y == 1 && fy == 0) out.shape[o] = x, out.batch[o] = fx;
    else return false;
  }
  return true;
}

DType promote(DType a, DType b) { return a == kFloat64 || b == kFloat64 ? kFloat64 : kFloat32; }

class Gen {
 public:
  Gen(uint64_t seed, const GenOptions& options) : rng_(seed), options_(options) {
    p_.seed = seed;
    dtype_ = rng_.chance(70) ? kFloat32 : kFloat64;
    p_.backward = options.backward && rng_.chance(70);
    if (options.batch) p_.batch = rng_.between(3, 6);
    if (options.batch && anyDims()) {
      where_ = Where(rng_.chance(20) ? 0 : rng_.between(1, 3));
      if (options.dims == GenOptions::Dims::Two) p_.seq = rng_.between(3, 6);
    }
  }

  Program run() {
    newInput(rng_.chance(30) ? 4 : rng_.between(1, 3));
    if (rng_.chance(40)) newInput(rng_.between(1, 4));
    const int ops = int(rng_.between(1, std::max(1, options_.maxOps)));
    for (int i = 0; i < ops; ++i)
      for (int attempt = 0; attempt < 20 && !step(); ++attempt) {}
    if (countOps(p_) == 0) push(unary(Op::Neg, pickValue()));
    chooseOutputs();
    if (gradParams(p_).empty()) p_.backward = false;
    if (!batched())
      for (Node& n : p_.nodes) n.batch.clear();
    if (std::none_of(p_.nodes.begin(), p_.nodes.end(), [](const Node& n) {
          return std::any_of(n.batch.begin(), n.batch.end(), followsS);
        }))
      p_.seq = 0;  // no input drew S
    return p_;
  }

 private:
  // ---- values and leaves ----------------------------------------------------------------
  bool batched() const { return p_.batch > 0; }
  bool anyDims() const { return options_.dims != GenOptions::Dims::First; }
  int64_t dim() { return options_.wideDims ? rng_.pick(kWideDims) : rng_.pick(kDims); }

  // Facts are inferred at the largest batch size, where reductions over the batch are
  // longest, so the guards they place hold at every size.
  int push(Node n) {
    n.batch.resize(n.shape.size(), 0);
    Node largest = atBatch(n, kLargestBatch);
    if (batched() && numel(largest.shape) > kMaxNumelAtLargestBatch) invalid_ = true;
    facts_.push_back(infer(largest_, facts_, largest));
    largest_.nodes.push_back(std::move(largest));
    p_.nodes.push_back(std::move(n));
    return int(p_.nodes.size()) - 1;
  }

  static bool follows(const Shape& batch) { return std::any_of(batch.begin(), batch.end(), fuzz::follows); }
  bool follows(int v, int64_t d) const { return fuzz::follows(node(v).batch[size_t(d)]); }

  // In a batch program a leaf whose dim 0 is the batch (and no other dim follows it) is
  // an input (with GenOptions::dims Any or Two, one whose dims are B, S or fixed, each
  // size at most once: isInputBatch), one of fixed shape is state, and any other leaf
  // cannot be made.
  int leaf(Shape shape, DType dtype, Fill fill, bool state, bool param = false, int64_t high = 0,
           Shape batch = {}) {
    state = state || size_t(inputs_) >= kMaxInputs;
    batch.resize(shape.size(), 0);
    if (batched() && !follows(batch)) state = true;
    if (batched() && follows(batch)) {
      Shape input(shape.size(), 0);
      input[0] = 1;
      if (state || (anyDims() ? !isInputBatch(batch) : batch != input)) invalid_ = true;
    }
    Node n;
    n.op = state ? Op::State : Op::Input;
    n.slot = state ? states_++ : inputs_++;
    n.flag = param;
    n.fill = fill;
    n.high = high;
    n.shape = std::move(shape);
    n.batch = std::move(batch);
    n.dtype = dtype;
    return push(std::move(n));
  }

  // A floating leaf: an input, or with backward often a parameter (never one that follows
  // the batch); sometimes the other dtype.
  int floatLeaf(Shape shape, std::optional<DType> dtype = std::nullopt, Shape batch = {}) {
    const DType d = dtype.value_or(rng_.chance(10) ? (dtype_ == kFloat32 ? kFloat64 : kFloat32) : dtype_);
    const bool param = p_.backward && rng_.chance(45) && !follows(batch);
    const bool buffer = options_.inPlace && !param && !follows(batch) && rng_.chance(20);
    return leaf(std::move(shape), d, rng_.chance(15) ? Fill::Positive : Fill::Normal, param || buffer, param, 0,
                std::move(batch));
  }

  // A new floating input of rank `rank`; in a batch program its dim 0 is the batch, or
  // (GenOptions::dims) the dims inputBatch() draws.
  int newInput(int64_t rank) {
    Shape s = randomShape(rank);
    if (!batched()) return floatLeaf(s);
    Shape batch(s.size(), 0);
    batch[0] = 1;
    if (anyDims()) batch = inputBatch(rank);
    for (size_t d = 0; d < s.size(); ++d)
      if (batch[d] != 0) s[d] = sizeAt(batch[d], p_.batch, p_.seq);
    // Fixed dims shrink until the input fits at every size (B and S at their largest).
    for (int64_t limit : {int64_t(4), int64_t(1)})
      for (size_t d = 0; d < s.size() && (numel(s) > kMaxNumel || largestNumel(s, batch) > kMaxNumelAtLargestBatch); ++d)
        if (batch[d] == 0) s[d] = std::min(s[d], limit);
    return floatLeaf(s, std::nullopt, batch);
  }

  static int64_t largestNumel(const Shape& s, const Shape& batch) {
    int64_t n = 1;
    for (size_t d = 0; d < s.size(); ++d) n *= batch[d] == 0 ? s[d] : sizeAt(batch[d], kLargestBatch, kLargestBatch);
    return n;
  }

  // Where B sits in an input of rank `r` (the program's Where), and with
  // GenOptions::dims Two where S does: in another dim of the first input often (which
  // always holds B), and in later inputs beside B or alone at B's place.
  Shape inputBatch(int64_t r) {
    Shape batch(size_t(r), 0);
    const int64_t b = where_ == kDim0 ? 0 : where_ == kDim1 ? std::min<int64_t>(1, r - 1)
                      : where_ == kLast ? r - 1 : std::min(r / 2, r - 1);
    if (p_.seq == 0) {
      batch[size_t(b)] = 1;
      return batch;
    }
    const int64_t how = inputs_ == 0 ? (r >= 2 && rng_.chance(70) ? 1 : 0) : rng_.below(3);  // B, B and S, S
    batch[size_t(b)] = how == 2 ? -1 : 1;
    if (how == 1 && r >= 2) batch[size_t((b + 1 + rng_.below(r - 1)) % r)] = -1;
    return batch;
  }

  Shape randomShape(int64_t rank) {
    Shape s;
    for (int64_t i = 0; i < rank; ++i) s.push_back(dim());
    while (numel(s) > kMaxNumel) s[size_t(rng_.below(rank))] = rng_.between(1, 4);
    return s;
  }

  const Node& node(int v) const { return p_.nodes[size_t(v)]; }
  const Shape& shape(int v) const { return node(v).shape; }
  Dims dims(int v) const { return {node(v).shape, node(v).batch}; }
  int64_t rank(int v) const { return int64_t(shape(v).size()); }

  // An earlier floating value, recent ones likelier.
  int pickValue(int64_t wantRank = -1) {
    std::vector<int> candidates;
    for (int v = 0; v < int(p_.nodes.size()); ++v)
      if (isFloatingPoint(node(v).dtype) && (wantRank < 0 || rank(v) == wantRank)) candidates.push_back(v);
    if (candidates.empty()) return -1;
    const int64_t back = std::min<int64_t>(rng_.below(3) == 0 ? rng_.below(int64_t(candidates.size())) : rng_.below(2),
                                           int64_t(candidates.size()) - 1);
    return candidates[candidates.size() - 1 - size_t(back)];
  }

  // ---- guards -----------------------------------------------------------------------------
  int scaled(int v, double factor) {
    Node n = unary(Op::MulScalar, v);
    n.scalar = factor;
    return push(std::move(n));
  }

  // |v| <= limit, by a power-of-two scale (exact) when needed.
  int bounded(int v, double limit) {
    const double m = facts_[size_t(v)].mag();
    if (m <= limit) return v;
    return scaled(v, std::ldexp(1.0, -int(std::ceil(std::log2(m / limit)))));
  }

  // v >= 0.5: abs(v) + 0.5 when v may be smaller.
  int positive(int v) {
    if (facts_[size_t(v)].lo >= 0.5) return v;
    Node n = unary(Op::AddScalar, push(unary(Op::Abs, v)));
    n.scalar = 0.5;
    return push(std::move(n));
  }

  Node unary(Op op, int v) {
    Node n;
    n.op = op;
    n.args = {v};
    n.shape = shape(v);
    n.batch = node(v).batch;
    n.dtype = node(v).dtype;
    return n;
  }

  // ---- operands of binary ops -------------------------------------------------------------
  Dims partnerShape(const Dims& a) {
    Dims s = a;
    if (rng_.chance(30) && !s.shape.empty()) {
      const int64_t dropped = rng_.between(1, int64_t(s.rank()));
      s.shape.erase(s.shape.begin(), s.shape.begin() + dropped);
      s.batch.erase(s.batch.begin(), s.batch.begin() + dropped);
    }
    for (size_t d = 0; d < s.rank(); ++d)
      if (rng_.chance(25)) s.shape[d] = 1, s.batch[d] = 0;
    if (rng_.chance(10) && s.rank() == a.rank() && a.rank() < 4) {
      s.shape.insert(s.shape.begin(), rng_.between(2, 3));
      s.batch.insert(s.batch.begin(), 0);
    }
    return s;
  }

  // A value broadcastable with `a` (an earlier one, or a new leaf), within the size limits.
  int partner(int a, Dims& out) {
    if (rng_.chance(50)) {
      std::vector<int> fits;
      for (int v = 0; v < int(p_.nodes.size()); ++v)
        if (v != a && isFloatingPoint(node(v).dtype) && broadcastable(dims(a), dims(v), out) &&
            numel(out.shape) <= kMaxNumel && out.rank() <= 4)
          fits.push_back(v);
      if (!fits.empty()) {
        const int v = fits[size_t(rng_.below(int64_t(fits.size())))];
        broadcastable(dims(a), dims(v), out);
        return v;
      }
    }
    Dims s = partnerShape(dims(a));
    if (!broadcastable(dims(a), s, out) || numel(out.shape) > kMaxNumel) s = dims(a);
    broadcastable(dims(a), s, out);
    return floatLeaf(s.shape, std::nullopt, s.batch);
  }

  // ---- ops --------------------------------------------------------------------------------
  bool step() {
    static constexpr Op kWeighted[] = {
        Op::Neg, Op::Abs, Op::Exp, Op::Exp, Op::Log, Op::Sqrt, Op::Rsqrt, Op::Tanh, Op::Sigmoid, Op::Relu,
        Op::Sin, Op::Cos, Op::Add, Op::Add, Op::Add, Op::Sub, Op::Mul, Op::Mul, Op::Mul, Op::Div,
        Op::Maximum, Op::Minimum, Op::AddScalar, Op::MulScalar, Op::PowScalar, Op::Where, Op::Sum,
        Op::Sum, Op::Mean, Op::Mean, Op::Amax, Op::Amin, Op::Softmax, Op::LogSoftmax, Op::LayerNorm,
        Op::LayerNorm, Op::BatchNorm, Op::BatchNorm, Op::Matmul, Op::Matmul, Op::Addmm, Op::Reshape,
        Op::Reshape, Op::View, Op::Unsqueeze, Op::Squeeze, Op::Flatten, Op::Transpose, Op::Permute,
        Op::Slice, Op::Slice, Op::Contiguous, Op::Cat, Op::Cat, Op::Gather, Op::Conv2d, Op::Conv2d,
        Op::MaxPool2d, Op::AvgPool2d, Op::Convert};
    const Op op = options_.inPlace && rng_.chance(8) ? Op::InPlace : rng_.pick(kWeighted);
    const int before = int(p_.nodes.size());
    const int v = emit(op);
    if (v < 0 || invalid_) {  // undo guards and leaves made for an op that did not fit
      p_.nodes.resize(size_t(before));
      largest_.nodes.resize(size_t(before));
      facts_.resize(size_t(before));
      recountSlots();
      invalid_ = false;
      return false;
    }
    if (facts_[size_t(v)].mag() > 64) bounded(v, 4);
    return true;
  }

  void recountSlots() {
    inputs_ = states_ = 0;
    for (const Node& n : p_.nodes) {
      if (n.op == Op::Input) inputs_ = std::max(inputs_, n.slot + 1);
      if (n.op == Op::State) states_ = std::max(states_, n.slot + 1);
    }
  }

  int emit(Op op) {
    switch (op) {
      case Op::Neg: case Op::Abs: case Op::Tanh: case Op::Sigmoid: case Op::Relu:
        return push(unary(op, pickValue()));
      case Op::Exp: return push(unary(op, bounded(pickValue(), 4)));
      case Op::Sin: case Op::Cos: return push(unary(op, bounded(pickValue(), 8)));
      case Op::Log: case Op::Sqrt: case Op::Rsqrt: return push(unary(op, positive(bounded(pickValue(), 64))));
      case Op::Add: case Op::Sub: case Op::Mul: case Op::Div: case Op::Maximum: case Op::Minimum:
        return binary(op);
      case Op::AddScalar: case Op::MulScalar: case Op::PowScalar: return withScalar(op);
      case Op::Where: return where();
      case Op::Sum: case Op::Mean: case Op::Amax: case Op::Amin: return reduce(op);
      case Op::Softmax: case Op::LogSoftmax: return softmax(op);
      case Op::LayerNorm: return layerNorm();
      case Op::BatchNorm: return batchNorm();
      case Op::Matmul: return matmul();
      case Op::Addmm: return addmm();
      case Op::Reshape: case Op::View: return reshape(op);
      case Op::Unsqueeze: case Op::Squeeze: case Op::Flatten: case Op::Transpose: case Op::Permute:
        return reorder(op);
      case Op::Slice: return slice();
      case Op::Contiguous: return contiguous();
      case Op::Cat: return concat();
      case Op::Gather: return gather();
      case Op::Conv2d: return conv2d();
      case Op::MaxPool2d: case Op::AvgPool2d: return pool(op);
      case Op::Convert: {
        Node n = unary(op, pickValue());
        n.dtype = n.dtype == kFloat32 ? kFloat64 : kFloat32;
        return push(std::move(n));
      }
      case Op::InPlace: return writeInPlace();
      default: return -1;
    }
  }

  // ---- states and values written in place (GenOptions::inPlace) -----------------------------
  // Whether a value that a gradient flows through reads `t` (or `t` is one): autograd saved
  // it, and writing it before backward() is an error (eager checks the storage's version).
  // `deps` is dependencies(p_); `onParam[n]`: node n depends on a parameter.
  bool readForGradient(int t, const std::vector<std::vector<bool>>& deps, const std::vector<bool>& onParam) const {
    if (!p_.backward) return false;
    for (size_t n = 0; n < p_.nodes.size(); ++n)
      if (!isLeaf(p_.nodes[n].op) && deps[n][size_t(t)] && onParam[n]) return true;
    return false;
  }

  // Whether some value is a view of `t` (or may be): a trace records values, not memory, so
  // jit::trace rejects writing a tensor that shares memory with a live view.
  bool viewed(int t) const {
    for (int n = 0; n < int(p_.nodes.size()); ++n) {
      if (isLeaf(node(n).op) || !mayShareStorage(node(n).op) || node(n).op == Op::InPlace) continue;
      int root = n;
      while (!isLeaf(node(root).op) && mayShareStorage(node(root).op)) root = node(root).args[0];
      if (root == t) return true;
    }
    return false;
  }

  // Whether `t` may be written in place: a buffer (state no gradient reaches) in its fill's
  // range, or a value of its own storage whose range holds [-1, 1] (the writes are of that
  // range); of fixed shape, not viewed, not saved for a gradient.
  bool writable(int t, const std::vector<std::vector<bool>>& deps, const std::vector<bool>& onParam) const {
    const Node& n = node(t);
    if (!isFloatingPoint(n.dtype) || follows(n.batch) || viewed(t) || readForGradient(t, deps, onParam))
      return false;
    if (n.op == Op::State) return !n.flag && (n.fill == Fill::Normal || n.fill == Fill::Positive);
    return !mayShareStorage(n.op) && facts_[size_t(t)].lo <= -1 && facts_[size_t(t)].hi >= 1;
  }

  // A state (a buffer read earlier, or a new one) or an earlier value written in place with a
  // value of its shape or one that broadcasts to it.
  int writeInPlace() {
    const std::vector<std::vector<bool>> deps = dependencies(p_);
    std::vector<bool> onParam(p_.nodes.size(), false);
    for (size_t n = 0; n < p_.nodes.size(); ++n)
      for (size_t q = 0; q < p_.nodes.size() && !onParam[n]; ++q) onParam[n] = deps[n][q] && isParam(p_.nodes[q]);
    std::vector<int> states, values;
    for (int v = 0; v < int(p_.nodes.size()); ++v)
      if (writable(v, deps, onParam)) (node(v).op == Op::State ? states : values).push_back(v);
    int t = -1;
    if (!values.empty() && rng_.chance(50)) {
      t = values[size_t(rng_.below(int64_t(values.size())))];
    } else if (!states.empty() && !rng_.chance(20)) {
      t = states[size_t(rng_.below(int64_t(states.size())))];
    } else {
      // Of an earlier value's shape, or square (so the value may be the state transposed).
      const int like = pickValue();
      if (like < 0 || follows(node(like).batch)) return -1;
      Shape shape = this->shape(like);
      if (rng_.chance(35)) {
        const int64_t k = dim();
        shape = rng_.chance(70) ? Shape{k, k} : Shape{rng_.between(2, 3), k, k};
      }
      t = leaf(shape, node(like).dtype, rng_.chance(20) ? Fill::Positive : Fill::Normal, true);
    }
    const bool state = node(t).op == Op::State, positiveState = state && node(t).fill == Fill::Positive;
    int v = inPlaceValue(t);
    if (!state) v = push(unary(rng_.chance(50) ? Op::Tanh : Op::Sin, bounded(v, 8)));  // in [-1, 1]
    v = bounded(v, 5);
    if (positiveState) v = positive(v);
    if (node(v).dtype != node(t).dtype) {
      Node c = unary(Op::Convert, v);
      c.dtype = node(t).dtype;
      v = push(std::move(c));
    }
    if (mayShareStorage(node(v).op)) v = push(unary(positiveState ? Op::Abs : Op::Neg, v));
    const InPlaceKind kind = InPlaceKind(rng_.below(3));
    Node n = unary(Op::InPlace, t);
    n.args = {t, v};
    n.ints = {int64_t(kind)};
    n.scalar = kind == InPlaceKind::Copy ? 0 : rng_.chance(50) ? 0.25 : 0.5;
    return push(std::move(n));
  }

  // The value written into `s`: one `s` itself gives, often with its elements moved (a
  // transpose of equal dims, a reduction kept as a broadcast dim), so a kernel that writes
  // it reads it elsewhere than where it writes; an earlier value that broadcasts to it,
  // often one that depends on it; or a new leaf.
  int inPlaceValue(int s) {
    const Dims target = dims(s);
    const int64_t how = rng_.below(3), r = rank(s);
    if (how == 0) {
      static constexpr Op kOf[] = {Op::Tanh, Op::Sin, Op::Neg, Op::MulScalar};
      const Op op = rng_.pick(kOf);
      Node f = unary(op, op == Op::Sin ? bounded(s, 8) : s);
      if (f.op == Op::MulScalar) f.scalar = 0.5;
      int v = push(std::move(f));
      std::vector<std::pair<int64_t, int64_t>> equal;
      for (int64_t i = 0; i < r; ++i)
        for (int64_t j = i + 1; j < r; ++j)
          if (target.shape[size_t(i)] == target.shape[size_t(j)] && target.shape[size_t(i)] > 1) equal.emplace_back(i, j);
      if (!equal.empty() && rng_.chance(70)) {
        const auto [i, j] = equal[size_t(rng_.below(int64_t(equal.size())))];
        Node t = unary(Op::Transpose, v);
        t.ints = {i, j};
        return push(std::move(t));
      }
      if (r > 0 && rng_.chance(60)) {
        Node m = unary(rng_.chance(50) ? Op::Mean : Op::Amax, v);
        m.flag = true;
        m.ints = someDims(r, rng_.between(1, r));
        for (int64_t d : m.ints) m.shape[size_t(normalize(d, r))] = 1;
        return push(std::move(m));
      }
      return v;
    }
    if (how == 1) {
      const std::vector<std::vector<bool>> deps = dependencies(p_);
      std::vector<int> fits, onState;
      Dims out;
      for (int v = 0; v < int(p_.nodes.size()); ++v)
        if (v != s && isFloatingPoint(node(v).dtype) && broadcastable(target, dims(v), out) &&
            out.shape == target.shape && out.batch == target.batch) {
          fits.push_back(v);
          if (deps[size_t(v)][size_t(s)]) onState.push_back(v);
        }
      const std::vector<int>& from = !onState.empty() && rng_.chance(60) ? onState : fits;
      if (!from.empty()) return from[size_t(rng_.below(int64_t(from.size())))];
    }
    return floatLeaf(target.shape, node(s).dtype);
  }

  int binary(Op op) {
    int a = pickValue();
    Dims out;
    int b = partner(a, out);
    if (op == Op::Div) b = positive(bounded(b, 8));
    if (op == Op::Mul) {  // keeps products of products from growing without bound
      a = bounded(a, 16);
      b = bounded(b, 16);
    }
    if (op != Op::Div && rng_.chance(30)) std::swap(a, b);
    Node n = unary(op, a);
    n.args = {a, b};
    n.shape = out.shape;
    n.batch = out.batch;
    n.dtype = promote(node(a).dtype, node(b).dtype);
    return push(std::move(n));
  }

  int withScalar(Op op) {
    static constexpr double kAdd[] = {0.5, -1.5, 2.0, 0.25, 3.0}, kMul[] = {-1.5, 0.5, 2.0, -0.25, 3.0};
    const int v = pickValue();
    Node n = unary(op, op == Op::PowScalar ? bounded(v, 3) : v);
    n.scalar = op == Op::AddScalar ? rng_.pick(kAdd) : op == Op::MulScalar ? rng_.pick(kMul) : double(rng_.between(2, 3));
    return push(std::move(n));
  }

  int where() {
    const int a = pickValue();
    Dims out, condShape;
    const int b = partner(a, out);
    Dims c = partnerShape(dims(a));
    if (!broadcastable(out, c, condShape) || condShape.shape != out.shape || condShape.batch != out.batch) c = out;
    const int cond = leaf(c.shape, kBool, Fill::Bools, false, false, 0, c.batch);
    Node n = unary(Op::Where, a);
    n.args = {cond, a, b};
    n.shape = out.shape;
    n.batch = out.batch;
    n.dtype = promote(node(a).dtype, node(b).dtype);
    return push(std::move(n));
  }

  // Distinct dims of a rank-r value, printed negative half the time.
  Shape someDims(int64_t r, int64_t count) {
    Shape all(static_cast<size_t>(r), 0);
    std::iota(all.begin(), all.end(), 0);
    for (int64_t i = r - 1; i > 0; --i) std::swap(all[size_t(i)], all[size_t(rng_.below(i + 1))]);
    all.resize(size_t(count));
    for (int64_t& d : all)
      if (rng_.chance(30)) d -= r;
    return all;
  }

  static int64_t normalize(int64_t d, int64_t r) { return d < 0 ? d + r : d; }

  int reduce(Op op) {
    const int a = pickValue();
    Node n = unary(op, a);
    const int64_t r = rank(a);
    n.flag = rng_.chance(50);
    if (r > 0 && !rng_.chance(20)) n.ints = someDims(r, rng_.between(1, r));
    Shape out, batch;
    for (int64_t d = 0; d < r; ++d) {
      const bool reduced = n.ints.empty() || std::any_of(n.ints.begin(), n.ints.end(),
                                                         [&](int64_t k) { return normalize(k, r) == d; });
      if (!reduced) out.push_back(shape(a)[size_t(d)]), batch.push_back(node(a).batch[size_t(d)]);
      else if (n.flag) out.push_back(1), batch.push_back(0);
    }
    n.shape = out;
    n.batch = batch;
    // A sum over the batch grows with it: keep it well-conditioned at the largest size.
    const double length = double(reductionLength(largest_, atBatch(n, kLargestBatch)));
    if (batched() && op == Op::Sum && length * facts_[size_t(a)].mag() > 1e5) n.args[0] = bounded(a, 1e5 / length);
    return push(std::move(n));
  }

  int softmax(Op op) {
    const int a = pickValue();
    if (rank(a) == 0) return -1;
    Node n = unary(op, bounded(a, 16));
    n.ints = someDims(rank(a), 1);
    return push(std::move(n));
  }

  // weight and bias of `shape`, in `dtype`, for a normalization's affine part.
  void affine(Node& n, const Shape& shape, DType dtype) {
    if (!rng_.chance(50)) return;
    n.args.push_back(floatLeaf(shape, dtype));
    n.args.push_back(floatLeaf(shape, dtype));
  }

  int layerNorm() {
    const int a = pickValue();
    if (rank(a) == 0) return -1;
    Node n = unary(Op::LayerNorm, a);
    const int64_t k = rank(a) >= 2 && rng_.chance(30) ? 2 : 1;
    n.ints.assign(shape(a).end() - k, shape(a).end());
    for (int64_t d = rank(a) - k; d < rank(a); ++d)
      if (follows(a, d)) return -1;  // its normalized shape would follow the batch
    affine(n, n.ints, n.dtype);
    return push(std::move(n));
  }

  int batchNorm() {
    const int a = pickValue();
    if (rank(a) < 2 || numel(shape(a)) / shape(a)[1] < 2 || follows(a, 1)) return -1;
    Node n = unary(Op::BatchNorm, a);
    const Shape channels{shape(a)[1]};
    n.args.push_back(leaf(channels, n.dtype, Fill::Normal, true));
    n.args.push_back(leaf(channels, n.dtype, Fill::Positive, true));
    affine(n, channels, n.dtype);
    n.scalar = rng_.chance(50) ? 0.1 : 0.3;
    return push(std::move(n));
  }

  int matmul() {
    const int a = bounded(pickValue(), 8);
    if (rank(a) == 0) return -1;
    const Shape as = shape(a), af = node(a).batch;
    const int64_t k = as.back(), m = dim(), how = rng_.below(4);
    // A contraction over a dynamic size: the other operand, an input, holds it too.
    const int64_t kf = af.back();
    if (fuzz::follows(kf) && !anyDims()) return -1;
    Shape bs, out(as.begin(), as.end() - 1), bf, outBatch(af.begin(), af.end() - 1);
    if (how == 0) {
      bs = {k};  // matrix-vector, or a dot product
      bf = {kf};
    } else if (how == 1 && rank(a) >= 3) {
      bs.assign(as.begin(), as.end() - 2);  // batched
      bf.assign(af.begin(), af.end() - 2);
      bs.insert(bs.end(), {k, m});
      bf.insert(bf.end(), {kf, 0});
      out.push_back(m);
    } else if (how == 2 && rank(a) == 1) {
      bs = {rng_.between(2, 3), k, m};  // vector times a batch of matrices
      bf = {0, kf, 0};
      out = {bs[0], m};
      outBatch = {0};
    } else {
      bs = {k, m};
      bf = {kf, 0};
      out.push_back(m);
    }
    if (numel(out) > kMaxNumel) return -1;
    Node n = unary(Op::Matmul, a);
    bf.resize(bs.size(), 0);
    n.args.push_back(bounded(floatLeaf(bs, n.dtype, bf), 8));
    n.shape = out;
    n.batch = outBatch;
    return push(std::move(n));
  }

  int addmm() {
    const int a = pickValue(2);
    if (a < 0) return -1;
    const int64_t m = dim();
    if (follows(a, 1)) return -1;
    Node n = unary(Op::Addmm, a);
    const int b = floatLeaf({shape(a)[1], m}, n.dtype);
    n.args = {floatLeaf({m}, n.dtype), a, b};
    n.shape = {shape(a)[0], m};
    n.batch = {node(a).batch[0], 0};
    return push(std::move(n));
  }

  // The factor of dims `from`..`to` of `s` merged into one: the product of the fixed
  // sizes times the one factor that follows the batch; a product of two batch sizes
  // (which a factor cannot say) makes the op invalid.
  int64_t mergedFactor(const Dims& s, size_t from, size_t to) {
    int64_t fixed = 1, factor = 0;
    for (size_t d = from; d <= to; ++d) {
      if (s.batch[d] == 0) fixed *= s.shape[d];
      else if (factor == 0) factor = s.batch[d];
      else invalid_ = true;
    }
    return factor * fixed;
  }

  // A new shape of the same size: dims merged, split, or a 1 inserted or removed. A dim
  // that follows the batch splits only into a fixed size and one that follows it.
  Dims reshaped(Dims s) {
    const size_t r = s.rank();
    const int64_t how = rng_.below(4);
    if (how == 0 && r >= 2) {
      const size_t i = size_t(rng_.below(int64_t(r) - 1));
      s.batch[i] = mergedFactor(s, i, i + 1);
      s.shape[i] *= s.shape[i + 1];
      s.shape.erase(s.shape.begin() + int64_t(i) + 1);
      s.batch.erase(s.batch.begin() + int64_t(i) + 1);
    } else if (how == 1 && r >= 1 && r < 4) {
      const size_t i = size_t(rng_.below(int64_t(r)));
      for (int64_t f = 2; f < s.shape[i]; ++f)
        if (s.shape[i] % f == 0) {
          if (s.batch[i] % f != 0) invalid_ = true;
          s.shape.insert(s.shape.begin() + int64_t(i) + 1, s.shape[i] / f);
          s.batch.insert(s.batch.begin() + int64_t(i) + 1, s.batch[i] / f);
          s.shape[i] = f;
          s.batch[i] = 0;
          break;
        }
    } else if (how == 2 && r < 4) {
      const int64_t at = rng_.below(int64_t(r) + 1);
      s.shape.insert(s.shape.begin() + at, 1);
      s.batch.insert(s.batch.begin() + at, 0);
    } else {
      s.batch = {r == 0 ? 0 : mergedFactor(s, 0, r - 1)};
      s.shape = {numel(s.shape)};
    }
    return s;
  }

  int reshape(Op op) {
    const int a = pickValue();
    if (op == Op::View && !facts_[size_t(a)].contiguous) return -1;
    Node n = unary(op, a);
    Dims d = reshaped(dims(a));
    n.shape = d.shape;
    n.batch = d.batch;
    n.ints = n.shape;
    if (!n.ints.empty() && rng_.chance(30)) n.ints[size_t(rng_.below(int64_t(n.ints.size())))] = -1;
    return push(std::move(n));
  }

  int reorder(Op op) {
    const int a = pickValue();
    const int64_t r = rank(a);
    Node n = unary(op, a);
    Shape& s = n.shape;
    Shape& f = n.batch;
    if (op == Op::Unsqueeze) {
      if (r >= 4) return -1;
      const int64_t d = rng_.between(-(r + 1), r);
      n.ints = {d};
      s.insert(s.begin() + normalize(d, r + 1), 1);
      f.insert(f.begin() + normalize(d, r + 1), 0);
    } else if (op == Op::Squeeze) {
      Shape ones;
      for (int64_t d = 0; d < r; ++d)
        if (s[size_t(d)] == 1) ones.push_back(d);
      if (ones.empty()) return -1;
      const int64_t d = ones[size_t(rng_.below(int64_t(ones.size())))];
      n.ints = {rng_.chance(30) ? d - r : d};
      s.erase(s.begin() + d);
      f.erase(f.begin() + d);
    } else if (op == Op::Flatten) {
      if (r < 2) return -1;
      const int64_t start = rng_.below(r - 1), end = rng_.between(start + 1, r - 1);
      n.ints = {start, end};
      int64_t merged = 1;
      for (int64_t d = start; d <= end; ++d) merged *= s[size_t(d)];
      f[size_t(start)] = mergedFactor(dims(a), size_t(start), size_t(end));
      s.erase(s.begin() + start + 1, s.begin() + end + 1);
      f.erase(f.begin() + start + 1, f.begin() + end + 1);
      s[size_t(start)] = merged;
    } else if (op == Op::Transpose) {
      if (r < 2) return -1;
      const Shape d = someDims(r, 2);
      n.ints = d;
      std::swap(s[size_t(normalize(d[0], r))], s[size_t(normalize(d[1], r))]);
      std::swap(f[size_t(normalize(d[0], r))], f[size_t(normalize(d[1], r))]);
    } else {
      if (r < 2) return -1;
      n.ints = someDims(r, r);
      for (int64_t i = 0; i < r; ++i) {
        s[size_t(i)] = shape(a)[size_t(normalize(n.ints[size_t(i)], r))];
        f[size_t(i)] = node(a).batch[size_t(normalize(n.ints[size_t(i)], r))];
      }
    }
    return push(std::move(n));
  }

  int slice() {
    const int a = pickValue();
    const int64_t r = rank(a);
    if (r == 0) return -1;
    const int64_t d = rng_.below(r), size = shape(a)[size_t(d)];
    int64_t start = rng_.below(size), end = rng_.between(start + 1, size), step = rng_.between(1, 3);
    const bool dynamic = follows(a, d);
    // Bounds that follow a dynamic size are not generated; bounds within the smallest
    // size called (2 times the factor) are the same slice at every size. Not all of that
    // size: there the slice is the whole dim, which eager (so a recording) skips.
    if (dynamic && !anyDims()) return -1;
    if (dynamic) {
      const int64_t smallest = 2 * std::abs(node(a).batch[size_t(d)]);
      start = rng_.below(smallest), end = rng_.between(start + 1, smallest);
      if (start == 0 && end == smallest) --end;
    }
    Node n = unary(Op::Slice, a);
    n.ints = {rng_.chance(30) ? d - r : d, !dynamic && rng_.chance(30) ? start - size : start, end, step};
    n.shape[size_t(d)] = (end - start + step - 1) / step;
    n.batch[size_t(d)] = 0;
    return push(std::move(n));
  }

  int contiguous() {
    const int a = pickValue();
    if (facts_[size_t(a)].contiguous) return -1;
    return push(unary(Op::Contiguous, a));
  }

  int concat() {
    const int a = pickValue();
    const int64_t r = rank(a);
    if (r == 0) return -1;
    const int64_t d = rng_.below(r);
    // Fixed pieces and a dynamic size: a size no factor says. Along a dynamic dim the
    // pieces follow it as `a` does (inputs), and so the sum of their factors.
    const bool dynamic = follows(a, d);
    if (dynamic && !anyDims()) return -1;
    Node n = unary(Op::Cat, a);
    n.ints = {rng_.chance(30) ? d - r : d};
    for (int64_t k = rng_.between(1, 2); k > 0; --k) {
      Shape s = shape(a);
      s[size_t(d)] = dynamic ? shape(a)[size_t(d)] : rng_.between(1, 5);
      n.shape[size_t(d)] += s[size_t(d)];
      n.batch[size_t(d)] += node(a).batch[size_t(d)];
      n.args.push_back(floatLeaf(s, n.dtype, node(a).batch));
    }
    if (numel(n.shape) > kMaxNumel) return -1;
    if (rng_.chance(30)) std::swap(n.args[0], n.args.back());
    return push(std::move(n));
  }

  int gather() {
    const int a = pickValue();
    const int64_t r = rank(a);
    if (r == 0) return -1;
    const int64_t d = rng_.below(r);
    Shape is = shape(a), ib(size_t(r), 0);
    for (int64_t k = 0; k < r; ++k) is[size_t(k)] = k == d ? rng_.between(1, 5) : rng_.between(1, is[size_t(k)]);
    if (follows(a, d)) return -1;  // indices below the batch size
    for (int64_t k = 0; k < r && batched(); ++k) {  // all of a batch dim (an input's), or 1 or 2 of it
      if (!follows(a, k)) continue;
      const int64_t f = node(a).batch[size_t(k)];
      if ((anyDims() ? f == 1 || f == -1 : k == 0 && f == 1) && rng_.chance(50)) is[size_t(k)] = shape(a)[size_t(k)], ib[size_t(k)] = f;
      else is[size_t(k)] = rng_.between(1, 2);
    }
    Node n = unary(Op::Gather, a);
    n.ints = {d};
    n.args.push_back(leaf(is, kInt64, Fill::Ints, false, false, shape(a)[size_t(d)], ib));
    n.shape = is;
    n.batch = ib;
    return push(std::move(n));
  }

  // Output size of a window of `k` with `stride` and `padding` over `size`, or 0.
  static int64_t windows(int64_t size, int64_t k, int64_t stride, int64_t padding) {
    return size + 2 * padding < k ? 0 : (size + 2 * padding - k) / stride + 1;
  }

  // A rank-4 value for convolution and pooling: an earlier one, or often a new input.
  int pickImage() {
    const int a = pickValue(4);
    return a >= 0 || rng_.chance(50) ? a : newInput(4);
  }

  int conv2d() {
    const int a = pickImage();
    if (a < 0) return -1;
    const Shape& x = shape(a);
    const int64_t c = x[1], k = rng_.between(1, 3), stride = rng_.between(1, 2), pad = rng_.between(0, 1);
    const int64_t groups = rng_.chance(70) ? 1 : rng_.chance(60) ? c : std::gcd(c, int64_t(2));
    const int64_t out = groups * rng_.between(1, 3);
    const Shape result{x[0], out, windows(x[2], k, stride, pad), windows(x[3], k, stride, pad)};
    if (result[2] == 0 || result[3] == 0 || numel(result) > kMaxNumel) return -1;
    if (follows(a, 1) || follows(a, 2) || follows(a, 3)) return -1;
    Node n = unary(Op::Conv2d, bounded(a, 8));
    n.args.push_back(bounded(floatLeaf({out, c / groups, k, k}, n.dtype), 8));
    if (rng_.chance(50)) n.args.push_back(floatLeaf({out}, n.dtype));
    n.ints = {stride, pad, groups};
    n.shape = result;
    n.batch = {node(a).batch[0], 0, 0, 0};
    return push(std::move(n));
  }

  int pool(Op op) {
    const int a = pickImage();
    if (a < 0) return -1;
    const int64_t k = rng_.between(1, 3), stride = rng_.between(1, 2), pad = rng_.between(0, k / 2);
    if (follows(a, 2) || follows(a, 3)) return -1;
    Node n = unary(op, a);
    n.ints = {k, stride, pad};
    n.shape[2] = windows(shape(a)[2], k, stride, pad);
    n.shape[3] = windows(shape(a)[3], k, stride, pad);
    if (n.shape[2] == 0 || n.shape[3] == 0) return -1;
    return push(std::move(n));
  }

  // ---- outputs ----------------------------------------------------------------------------
  // The last op and up to two other ops nothing reads, so few ops are dead.
  void chooseOutputs() {
    std::vector<bool> read(p_.nodes.size(), false);
    for (const Node& n : p_.nodes)
      for (int a : n.args) read[size_t(a)] = true;
    std::vector<int> sinks;
    for (int v = int(p_.nodes.size()) - 1; v >= 0; --v)
      if (!isLeaf(node(v).op) && !read[size_t(v)]) sinks.push_back(v);
    p_.outputs = {sinks.front()};
    for (size_t k = 1; k < sinks.size() && p_.outputs.size() < 3; ++k)
      if (rng_.chance(70)) p_.outputs.push_back(sinks[k]);
  }

  // Where B sits in the inputs of a program generated with GenOptions::dims Any or Two.
  enum Where : int64_t { kDim0, kDim1, kLast, kMiddle };

  Rng rng_;
  GenOptions options_;
  Where where_ = kDim0;
  Program p_;
  Program largest_;  // p_ at kLargestBatch (p_ itself when it is not a batch program)
  bool invalid_ = false;  // the op being made needs what a batch program cannot hold
  std::vector<Facts> facts_;
  DType dtype_ = kFloat32;
  int inputs_ = 0, states_ = 0;
};

}  // namespace

Program generate(uint64_t seed, const GenOptions& options) { return Gen(seed, options).run(); }

}  // namespace kiln::fuzz

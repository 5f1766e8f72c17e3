// The fuzzer's program representation: a list of leaves and ops over Kiln's public API,
// run by evaluate() and printed as C++ by printCase(), both from one table of ops.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kiln/core/Tensor.h"

namespace kiln::fuzz {

using Tensors = std::vector<Tensor>;

// The most inputs a program takes (the traced function's arity); further leaves are state.
inline constexpr size_t kMaxInputs = 10;

enum class Op : uint8_t {
  Input, State,  // leaves: an argument of the traced function, or state it reads
  Neg, Abs, Exp, Log, Sqrt, Rsqrt, Tanh, Sigmoid, Relu, Sin, Cos,
  Add, Sub, Mul, Div, Maximum, Minimum,
  AddScalar, MulScalar, PowScalar,
  Where,
  Sum, Mean, Amax, Amin,
  Softmax, LogSoftmax, LayerNorm, BatchNorm,
  Matmul, Addmm,
  Reshape, View, Unsqueeze, Squeeze, Flatten, Transpose, Permute, Slice, Contiguous,
  Cat, Gather,
  Conv2d, MaxPool2d, AvgPool2d,
  Convert,
  InPlace,  // args {target, value}: a state or a value written in place (GenOptions::inPlace)
};

// How a leaf's values are made from a seed: the makers of test/e2e/Parity.h, so a printed
// reproducer pastes into that table and sees the same values.
enum class Fill : uint8_t { Normal, Positive, Ints, Bools };

// How Op::InPlace writes value v into its target t, a state or an earlier value (weight
// m = Node::scalar, in (0, 1)): t.mul_(1 - m).add_(v, m); t.sub_(t - v, m), which reads t
// again; t.copy_(v). Each keeps t within the range of t and v, so a state stays in its
// fill's range over every call.
enum class InPlaceKind : uint8_t { Average, TowardBy, Copy };

// One value of the program: a leaf or an op applied to earlier nodes.
struct Node {
  Op op = Op::Input;
  std::vector<int> args;  // operand node indices, all smaller than this node's
  Shape ints;             // attributes, meaning per op (see the table in Program.cpp)
  double scalar = 0;      // the scalar of *Scalar ops; batch_norm's momentum
  bool flag = false;      // keepdim; for a State leaf: a parameter (requires_grad)
  Fill fill = Fill::Normal;
  int64_t high = 0;       // Fill::Ints: values in [0, high)
  int slot = 0;           // a leaf's input or state index
  Shape shape;            // the result's
  // In a batch program, per dim of `shape`: c > 0 when its size is c times the batch
  // size B (the dim follows the batch), -c < 0 when it is c times the second dynamic size
  // S (Program::seq), 0 when it is fixed. Empty: every dim is fixed. A dim never follows
  // both: a merge of a B dim with an S dim is not generated.
  Shape batch;
  DType dtype = kFloat32;
};

struct Program {
  uint64_t seed = 0;
  std::vector<Node> nodes;
  std::vector<int> outputs;  // forward outputs, node indices
  // Ends in loss = sum over outputs k of sum(out_k * w_k) with fixed random w_k (state),
  // calls backward() inside the function and returns the parameters' gradients too.
  bool backward = false;
  // A batch program (the dynamic-shape mode): B, the size of one dim of every input (of
  // dim 0 unless generated with another GenOptions::dims), and the nodes' `batch` factors
  // say which sizes follow it. 0: a program of fixed shapes.
  int64_t batch = 0;
  // S, a second dynamic size independent of B (GenOptions::dims == Two), held by some
  // inputs' dims (factor -1); 0 when there is none.
  int64_t seq = 0;
};

// Whether a dim with batch factor `f` follows B, S, or either.
inline bool followsB(int64_t f) { return f > 0; }
inline bool followsS(int64_t f) { return f < 0; }
inline bool follows(int64_t f) { return f != 0; }
// Its size at B = b and S = s.
inline int64_t sizeAt(int64_t f, int64_t b, int64_t s) { return followsB(f) ? f * b : -f * s; }

// Whether a leaf of these factors may be an input of a batch program: each dim fixed, or
// exactly B or exactly S, and no size twice (an input holds B and S at most once each).
bool isInputBatch(const Shape& batch);
// The input and dim a traced function reads B (f = 1) or S (f = -1) from: {slot, dim}, or
// {-1, -1} when no input holds it.
std::pair<int, int64_t> sizeSource(const Program& p, int64_t f);

// The sizes of one call of a dynamic config.
struct CallSizes {
  int64_t batch = 0, seq = 0;
  bool operator==(const CallSizes&) const = default;
};

// The sizes of each call of a dynamic config: the program's own and twice it (so the
// two recordings merge into a dynamic program), then 2, odd, prime and large sizes, each
// twice: by value, the first call at a new size is the eager run jit::trace records to
// check that the dynamic program fits that size, and only the second runs the dynamic
// program specialized to it. Last, the two recorded sizes again. With S, the recordings
// are at (B, S) and (2B, 3S), so that no size of one is a fixed multiple of the other's
// at both, and the later calls change B alone, S alone and both.
std::vector<CallSizes> dynamicBatches(const Program& p);
// The largest of them: the generator keeps values well-conditioned at this size.
inline constexpr int64_t kLargestBatch = 61;
// `p` at B = `b` and S = `s`: every size that follows either, and the sizes reshape() and
// view() are given, scaled to it (as code computing them from x.size() would).
Program atBatch(Program p, int64_t b, int64_t s);
Program atBatch(Program p, CallSizes sizes);
// One node of a batch program at those sizes (its shape and reshape sizes).
Node atBatch(Node n, int64_t b, int64_t s);
// Both at `b` (the largest size, where the generator and the analysis look).
inline Program atBatch(Program p, int64_t b) { return atBatch(std::move(p), b, b); }
inline Node atBatch(Node n, int64_t b) { return atBatch(std::move(n), b, b); }

bool isLeaf(Op op);
bool isParam(const Node& node);
// The operands `node` writes in place: batch_norm's running statistics (state), in_place's
// target.
std::vector<int> writtenOperands(const Node& node);
// Whether an op's value may share storage with its operand (a view, or the operand itself)
// or is a leaf: what an in-place op may not write, nor read while writing another tensor.
bool mayShareStorage(Op op);
const char* opName(Op op);

// How to make one leaf (an input per call, or a state tensor once).
struct Leaf {
  Fill fill = Fill::Normal;
  Shape shape;
  DType dtype = kFloat32;
  int64_t high = 0;
  bool requiresGrad = false;
};
std::vector<Leaf> inputLeaves(const Program& p);
// The program's state leaves, then (with backward) one loss weight per output.
std::vector<Leaf> stateLeaves(const Program& p);
// The leaf's values from `seed`; floating leaves converted to `as` when given (the shadow
// runs that measure how well-conditioned a program is).
Tensor makeLeaf(const Leaf& leaf, uint64_t seed, std::optional<DType> as = std::nullopt);

// Parameters whose gradient the program returns: those some output depends on.
std::vector<int> gradParams(const Program& p);
// Node indices each node depends on, itself included (dependsOn[n][m]), as gradients flow:
// in_place's value is detached, so its result (the target) depends on the target alone.
std::vector<std::vector<bool>> dependencies(const Program& p);

// Runs the program on Kiln's public API: the forward outputs, then (with backward) the
// gradients of gradParams(). `as` computes every floating value in that dtype instead.
// `values`, if given, receives every node's value (forward only).
Tensors evaluate(const Program& p, const Tensors& inputs, const Tensors& state,
                 std::optional<DType> as = std::nullopt, Tensors* values = nullptr);

// The program as a case of test/e2e/OpCases.cpp (op(...) or withState(...)), named
// `name`, calling the same API as evaluate(); `comment` goes above it.
std::string printCase(const Program& p, const std::string& name, const std::string& comment);

// Number of ops (nodes that are not leaves).
int countOps(const Program& p);

}  // namespace kiln::fuzz

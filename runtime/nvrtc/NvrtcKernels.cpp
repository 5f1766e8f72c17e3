// The NVRTC kernel generator (see NvrtcKernels.h): a fused kernel's kiln ops as CUDA C,
// each value computed at an index given as per-dim C expressions (broadcasts, transposes
// and reshapes rewrite the index), each reduction as a block-wide loop hoisted before the
// row's elements.
#include "runtime/nvrtc/NvrtcKernels.h"

#include <algorithm>
#include <cctype>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <sstream>

#include "bridge/OpBridge.h"
#include "dialect/KilnOps.h"
#include "frontend/core/cuda/Codegen.h"
#include "frontend/core/cuda/Kernels.h"
#include "frontend/core/cuda/Nvrtc.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"

namespace kiln::runtime::nvrtc {

namespace {

namespace mk = mlir::kiln;

// A kernel the generator does not take, and why.
struct Declined {
  std::string why;
};

// A reduction met where its index varies across the threads of a row: more leading dims
// must be rows (Generator::generate retries).
struct NeedMoreRows {};

constexpr int kThreads = 256;

DType dtypeOf(mlir::Type element) {
  if (element.isF32()) return kFloat32;
  if (element.isF64()) return kFloat64;
  if (element.isF16()) return kFloat16;
  if (element.isBF16()) return kBFloat16;
  if (element.isInteger(1)) return kBool;
  if (element.isInteger(32)) return kInt32;
  if (element.isInteger(64)) return kInt64;
  std::string text;
  llvm::raw_string_ostream(text) << element;
  throw Declined{"element type " + text};
}

mlir::RankedTensorType tensorType(mlir::Value value) {
  auto type = llvm::dyn_cast<mlir::RankedTensorType>(value.getType());
  if (!type || !type.hasStaticShape()) throw Declined{"a value without a static shape"};
  return type;
}

DType dtypeOf(mlir::Value value) { return dtypeOf(tensorType(value).getElementType()); }

int64_t numel(llvm::ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

// `e` (a math value) rounded to `t` and back to its math type, as the eager kernels store
// every op's result.
std::string roundTo(DType t, const std::string& e) {
  if (t == kFloat16) return "h2f(f2h((float)(" + e + ")))";
  if (t == kBFloat16) return "bf2f(f2bf((float)(" + e + ")))";
  if (t == kBool) return "((" + e + ") != 0)";
  return "((" + std::string(cuda::mathType(t)) + ")(" + e + "))";
}

std::string hex32(uint32_t bits) {
  char text[16];
  std::snprintf(text, sizeof text, "0x%08" PRIx32 "u", bits);
  return text;
}

std::string hex64(uint64_t bits) {
  char text[32];
  std::snprintf(text, sizeof text, "0x%016" PRIx64 "ull", bits);
  return text;
}

// A splat constant's value in the math type of `t`, bit-exact (NaN and infinities too).
std::string literal(mk::ConstantOp op, DType t) {
  auto dense = llvm::dyn_cast<mlir::DenseElementsAttr>(op.getValue());
  if (!dense || !dense.isSplat()) throw Declined{"a constant that is not a splat"};
  if (isFloatingPoint(t)) {
    const double value = dense.getSplatValue<llvm::APFloat>().convertToDouble();
    if (t == kFloat64) {
      uint64_t bits;
      std::memcpy(&bits, &value, sizeof bits);
      return "__longlong_as_double((i64)" + hex64(bits) + ")";
    }
    const float narrow = float(value);  // exact: f32, f16 and bf16 values are floats
    uint32_t bits;
    std::memcpy(&bits, &narrow, sizeof bits);
    return "__int_as_float((int)" + hex32(bits) + ")";
  }
  if (t == kBool) return dense.getSplatValue<bool>() ? "true" : "false";
  const int64_t value = dense.getSplatValue<llvm::APInt>().getSExtValue();
  if (t == kInt32) return "((int)" + hex32(uint32_t(value)) + ")";
  return "((i64)" + hex64(uint64_t(value)) + ")";
}

// One dim's index: a C expression, and whether it varies across the threads that share a
// row (the element loop's or a reduction loop's variable is in it).
struct Idx {
  std::string text;
  bool varying = false;
};
using Index = std::vector<Idx>;

std::string keyOf(const void* what, const Index& index) {
  std::ostringstream key;
  key << what;
  for (const Idx& i : index) key << '|' << i.text;
  return key.str();
}

// The per-dim index of the flat (row-major) index `flat` over `shape`; unit dims are 0.
Index unflatten(const std::string& flat, llvm::ArrayRef<int64_t> shape, bool varying) {
  Index index(shape.size());
  int64_t stride = 1;
  for (int64_t d = int64_t(shape.size()) - 1; d >= 0; --d) {
    if (shape[size_t(d)] == 1) {
      index[size_t(d)] = {"0", false};
      continue;
    }
    const bool outermost = numel(shape.take_front(size_t(d))) == 1;
    std::string text = stride == 1 ? flat : "(" + flat + ") / " + std::to_string(stride);
    if (!outermost) text = "(" + text + ") % " + std::to_string(shape[size_t(d)]);
    index[size_t(d)] = {"(" + text + ")", varying};
    stride *= shape[size_t(d)];
  }
  return index;
}

// The flat (row-major) index of `index` over `shape`.
std::string flatten(const Index& index, llvm::ArrayRef<int64_t> shape) {
  std::string flat;
  int64_t stride = 1;
  for (int64_t d = int64_t(shape.size()) - 1; d >= 0; --d) {
    const std::string& i = index[size_t(d)].text;
    if (shape[size_t(d)] != 1 && i != "0") {
      std::string term = stride == 1 ? i : i + " * (ix)" + std::to_string(stride);
      flat = flat.empty() ? term : term + " + " + flat;
    }
    stride *= shape[size_t(d)];
  }
  return flat.empty() ? "0" : flat;
}

std::string opName(mlir::Operation* op) { return op->getName().getStringRef().str(); }

class Generator {
 public:
  Generator(mlir::func::FuncOp kernel, bool inPlace) : kernel_(kernel), inPlace_(inPlace) {}

  CudaKernel generate() {
    auto ret = llvm::cast<mlir::func::ReturnOp>(kernel_.getBody().front().getTerminator());
    results_.assign(ret.getOperands().begin(), ret.getOperands().end());
    bool reductions = false;
    int64_t largest = 1;
    for (mlir::BlockArgument arg : kernel_.getArguments()) largest = std::max(largest, numel(tensorType(arg).getShape()));
    for (mlir::Operation& op : kernel_.getBody().front()) {
      for (mlir::Value v : op.getResults()) largest = std::max(largest, numel(tensorType(v).getShape()));
      if (auto r = llvm::dyn_cast<mk::ReduceOp>(op); r && !r.getDims().empty()) reductions = true;
    }
    // 32-bit index arithmetic where every buffer has fewer than 2^31 elements.
    indexType_ = largest < (int64_t(1) << 31) ? "int" : "i64";
    CudaKernel k;
    k.name = "kiln_nvrtc_" + sanitized(kernel_.getSymName().str());
    std::string body;
    if (!reductions) {
      body = elementwise(k);
    } else {
      // The rows are the leading dims of the result with the most elements; a result of
      // another shape must be one value per row.
      for (mlir::Value v : results_)
        if (numel(tensorType(v).getShape()) > numel(tensorType(results_[main_]).getShape()))
          main_ = size_t(std::find(results_.begin(), results_.end(), v) - results_.begin());
      const auto shape = tensorType(results_[main_]).getShape();
      bool fits = false, done = false;
      for (int64_t rowDims = 0; !done && rowDims <= int64_t(shape.size()); ++rowDims) {
        if (!resultsFit(rowDims)) continue;
        fits = true;
        try {
          body = rows(k, rowDims);
          done = true;
        } catch (const NeedMoreRows&) {
          reset();
        }
      }
      if (!fits) throw Declined{"results of different shapes in a kernel with reductions, not one per row"};
      if (!done) throw Declined{"a reduction whose elements vary across a row"};
    }
    if (inPlace_)
      for (size_t a = 0; a < unsafeReads_.size(); ++a)
        if (unsafeReads_[a])
          throw Declined{"a result written over an operand that is also read at other "
                         "elements (operand " + std::to_string(a) + ")"};
    std::string src = cuda::prelude();
    src += "extern \"C\" __global__ void __launch_bounds__(" + std::to_string(kThreads) + ") " + k.name + "(";
    const char* restrict = inPlace_ ? "" : " __restrict__";
    for (mlir::BlockArgument arg : kernel_.getArguments())
      src += std::string(arg.getArgNumber() ? ", " : "") + "const " + cuda::storageType(dtypeOf(arg)) + "*" +
             restrict + " in" + std::to_string(arg.getArgNumber());
    for (size_t r = 0; r < results_.size(); ++r)
      src += std::string(r || kernel_.getNumArguments() ? ", " : "") + cuda::storageType(dtypeOf(results_[r])) +
             "*" + restrict + " out" + std::to_string(r);
    src += ") {\n  typedef " + indexType_ + " ix;\n" + shared_ + body + "}\n";
    k.source = std::move(src);
    k.threads = kThreads;
    return k;
  }

 private:
  static std::string sanitized(std::string name) {
    for (char& c : name)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') c = '_';
    return name;
  }

  // Forgets what a failed rows() attempt generated.
  void reset() {
    scopes_.clear();
    reductionValues_.clear();
    prologue_.clear();
    shared_.clear();
    scratch_.clear();
    unsafeReads_.clear();
    reductionCount_ = 0;
    serialCount_ = 0;
  }

  // ---- kernels without reductions: grid-stride loops over each result shape ----

  std::string elementwise(CudaKernel& k) {
    std::vector<std::vector<int64_t>> shapes;
    std::vector<std::vector<size_t>> groups;
    for (size_t r = 0; r < results_.size(); ++r) {
      auto shape = tensorType(results_[r]).getShape().vec();
      auto it = std::find(shapes.begin(), shapes.end(), shape);
      if (it == shapes.end()) {
        shapes.push_back(shape);
        groups.emplace_back();
        it = shapes.end() - 1;
      }
      groups[size_t(it - shapes.begin())].push_back(r);
    }
    // Results of different shapes are separate loops: one written over an operand would
    // change what a later loop reads.
    if (inPlace_ && shapes.size() > 1)
      throw Declined{"results of different shapes (separate loops) with one written over an operand"};
    std::string body;
    for (size_t g = 0; g < shapes.size(); ++g) {
      const int64_t n = numel(shapes[g]);
      k.elements = std::max(k.elements, n);
      body += "  for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < " + std::to_string(n) +
              "; i += (i64)gridDim.x * blockDim.x) {\n";
      body += "    const ix f = (ix)i;\n";
      std::string loop;
      out_ = &loop;
      indent_ = "    ";
      identity_ = declareIndex(unflatten("f", shapes[g], true), "o");
      rowDims_ = 0;
      scopes_.assign(1, {});
      body += loop;
      loop.clear();
      // Every result's value before any is stored: a result written over an operand must
      // not change what the others read.
      std::vector<std::string> values;
      for (size_t r : groups[g]) values.push_back(value(results_[r], identity_));
      for (size_t j = 0; j < groups[g].size(); ++j)
        loop += "    out" + std::to_string(groups[g][j]) + "[f] = " +
                cuda::storeAs(dtypeOf(results_[groups[g][j]]), values[j]) + ";\n";
      body += loop + "  }\n";
    }
    return body;
  }

  // `index`'s dims as named variables "<prefix><first + d>" (declared into out_); unit
  // dims stay 0.
  Index declareIndex(Index index, const std::string& prefix, size_t first = 0) {
    for (size_t d = 0; d < index.size(); ++d) {
      if (index[d].text == "0") continue;
      const std::string name = prefix + std::to_string(first + d);
      *out_ += indent_ + "const ix " + name + " = " + index[d].text + ";\n";
      index[d].text = name;
    }
    return index;
  }

  // ---- kernels with reductions: one block per row of the results' leading `rowDims` ----

  // Whether every result is of the main result's shape or one value per row of its
  // leading `rowDims` dims.
  bool resultsFit(int64_t rowDims) const {
    const auto shape = tensorType(results_[main_]).getShape();
    auto squeezed = [](llvm::ArrayRef<int64_t> s) {
      std::vector<int64_t> out;
      for (int64_t d : s)
        if (d != 1) out.push_back(d);
      return out;
    };
    for (mlir::Value v : results_) {
      const auto rshape = tensorType(v).getShape();
      if (rshape != shape && squeezed(rshape) != squeezed(shape.take_front(size_t(rowDims)))) return false;
    }
    return true;
  }

  std::string rows(CudaKernel& k, int64_t rowDims) {
    const auto shape = tensorType(results_[main_]).getShape();
    const int64_t rowCount = numel(shape.take_front(size_t(rowDims)));
    const int64_t rowLength = numel(shape.drop_front(size_t(rowDims)));
    rowDims_ = rowDims;
    std::string header, elements;
    out_ = &header;
    indent_ = "    ";
    Index rowIndex = declareIndex(unflatten("r", shape.take_front(size_t(rowDims)), false), "o");
    out_ = &elements;
    indent_ = "      ";
    Index inner = declareIndex(unflatten("j", shape.drop_front(size_t(rowDims)), true), "o", size_t(rowDims));
    identity_ = rowIndex;
    identity_.insert(identity_.end(), inner.begin(), inner.end());
    scopes_.assign(1, {});
    std::vector<std::string> values(results_.size());
    for (size_t r = 0; r < results_.size(); ++r)
      if (tensorType(results_[r]).getShape() == shape) values[r] = value(results_[r], identity_);
    for (size_t r = 0; r < results_.size(); ++r)
      if (tensorType(results_[r]).getShape() == shape)
        elements += indent_ + "out" + std::to_string(r) + "[(ix)r * (ix)" + std::to_string(rowLength) +
                    " + j] = " + cuda::storeAs(dtypeOf(results_[r]), values[r]) + ";\n";
    // Results of one value per row: by thread 0, after the row's reductions.
    std::string rowResults;
    out_ = &rowResults;
    indent_ = "      ";
    scopes_.assign(1, {});
    for (size_t r = 0; r < results_.size(); ++r) {
      const auto rshape = tensorType(results_[r]).getShape();
      if (rshape == shape) continue;
      // Its dims of more than one element are the rows' in order.
      Index index;
      size_t next = 0;
      for (int64_t size : rshape) {
        while (next < size_t(rowDims) && shape[next] == 1) ++next;
        index.push_back(size == 1 ? Idx{"0", false} : rowIndex[next++]);
      }
      values[r] = value(results_[r], index);
      rowResults += indent_ + "out" + std::to_string(r) + "[r] = " + cuda::storeAs(dtypeOf(results_[r]), values[r]) + ";\n";
    }
    k.rows = true;
    k.rowCount = rowCount;
    k.rowLength = rowLength;
    k.reductions = reductionCount_;
    k.serialReductions = serialCount_;
    std::string body = "  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;\n";
    body += "  for (i64 row = blockIdx.x; row < " + std::to_string(rowCount) + "; row += gridDim.x) {\n";
    body += "    const ix r = (ix)row;\n" + header + prologue_;
    if (!rowResults.empty()) body += "    if (threadIdx.x == 0) {\n" + rowResults + "    }\n";
    body += "    for (ix j = threadIdx.x; j < " + std::to_string(rowLength) + "; j += blockDim.x) {\n";
    body += elements + "    }\n";
    body += "    __syncthreads();  // the row's shared values are rewritten by the next row\n  }\n";
    return body;
  }

  // ---- values ----

  struct Scope {
    std::map<std::string, std::string> values;
  };

  std::string fresh(const char* prefix) { return prefix + std::to_string(counter_++); }

  // `v` at `index`, as a C expression of its math type (a variable or a literal).
  std::string value(mlir::Value v, const Index& index) {
    const std::string key = keyOf(v.getAsOpaquePointer(), index);
    for (auto s = scopes_.rbegin(); s != scopes_.rend(); ++s)
      if (auto it = s->values.find(key); it != s->values.end()) return it->second;
    std::string result = compute(v, index);
    scopes_.back().values[key] = result;
    return result;
  }

  std::string compute(mlir::Value v, const Index& index) {
    const DType t = dtypeOf(v);
    if (auto arg = llvm::dyn_cast<mlir::BlockArgument>(v)) return load(arg, index);
    mlir::Operation* op = v.getDefiningOp();
    if (op->getNumResults() != 1) throw Declined{"op " + opName(op)};
    auto type = tensorType(v);
    if (auto c = llvm::dyn_cast<mk::ConstantOp>(op)) return literal(c, t);
    if (auto b = llvm::dyn_cast<mk::BroadcastInDimOp>(op)) {
      auto operand = tensorType(b.getX());
      Index from;
      for (int64_t j = 0; j < operand.getRank(); ++j) {
        const int64_t d = b.getDims()[size_t(j)];
        from.push_back(operand.getDimSize(j) == 1 ? Idx{"0", false} : index[size_t(d)]);
      }
      return value(b.getX(), from);
    }
    if (auto tr = llvm::dyn_cast<mk::TransposeOp>(op)) {
      Index from(index.size());
      for (size_t k = 0; k < index.size(); ++k) from[size_t(tr.getPermutation()[k])] = index[k];
      return value(tr.getX(), from);
    }
    if (auto r = llvm::dyn_cast<mk::ReshapeOp>(op)) {
      auto operand = tensorType(r.getX());
      if (operand.getShape() == type.getShape()) return value(r.getX(), index);
      bool varying = false;
      for (const Idx& i : index) varying = varying || i.varying;
      const std::string flat = fresh("t");
      *out_ += indent_ + "const ix " + flat + " = " + flatten(index, type.getShape()) + ";\n";
      return value(r.getX(), unflatten(flat, operand.getShape(), varying));
    }
    if (auto r = llvm::dyn_cast<mk::ReduceOp>(op)) return reduce(r, index);
    return elementwiseOp(op, index);
  }

  std::string load(mlir::BlockArgument arg, const Index& index) {
    const auto type = tensorType(arg);
    const size_t a = arg.getArgNumber();
    // A read another thread's write may overtake where a result is written over this
    // operand: one at other than the element this thread writes (the same row, inside a
    // reduction: every reduction of a row is read before the row is written).
    bool mayBeOverwritten = false;
    for (mlir::Value r : results_) mayBeOverwritten = mayBeOverwritten || r.getType() == arg.getType();
    if (mayBeOverwritten) {
      const size_t checked = inReduction_ ? size_t(rowDims_) : index.size();
      bool same = index.size() == identity_.size();
      for (size_t d = 0; same && d < checked; ++d) same = index[d].text == identity_[d].text;
      if (unsafeReads_.size() <= a) unsafeReads_.resize(a + 1);
      if (!same) unsafeReads_[a] = true;
    }
    const DType t = dtypeOf(arg);
    const std::string name = fresh("v");
    *out_ += indent_ + "const " + cuda::mathType(t) + " " + name + " = " +
             cuda::loadAs(t, "in" + std::to_string(a) + "[" + flatten(index, type.getShape()) + "]") + ";\n";
    return name;
  }

  std::string elementwiseOp(mlir::Operation* op, const Index& index) {
    const bool select = llvm::isa<mk::SelectOp>(op);
    if (!select && !op->hasTrait<mlir::OpTrait::Elementwise>()) throw Declined{"op " + opName(op)};
    std::vector<std::string> operands;
    for (mlir::Value operand : op->getOperands()) operands.push_back(value(operand, index));
    const DType in = dtypeOf(op->getOperand(select ? 1 : 0));
    const DType out = dtypeOf(op->getResult(0));
    std::string expr;
    if (llvm::isa<mk::NotOp>(op) && in != kBool) {
      expr = "~a";  // bitwise on integers (the eager kernel takes bools only)
    } else {
      bridge::TableCall call;
      try {
        call = bridge::tableCallFor(op);
      } catch (const std::exception& e) {
        throw Declined{"op " + opName(op) + ": " + e.what()};
      }
      expr = cuda::elementwiseExpression(*call.op, call.attrs, in, out);
      if (expr.empty()) throw Declined{"op " + opName(op) + " (no CUDA expression for " + std::string(call.op->name) + ")"};
    }
    const std::vector<std::string> names = select ? std::vector<std::string>{"c0", "a", "b"}
                                                  : std::vector<std::string>{"a", "b", "c"};
    if (operands.size() > names.size()) throw Declined{"op " + opName(op) + " with more than 3 operands"};
    const std::string name = fresh("v");
    std::string line = indent_ + cuda::mathType(out) + " " + name + ";\n" + indent_ + "{ typedef " +
                       cuda::mathType(in) + " M; ";
    for (size_t k = 0; k < operands.size(); ++k)
      line += std::string("const ") + (select && k == 0 ? "bool" : "M") + " " + names[k] + " = " + operands[k] + "; ";
    line += name + " = " + roundTo(out, expr) + "; }\n";
    *out_ += line;
    return name;
  }

  // ---- reductions ----

  static bool isExtremum(mk::ReduceKind kind) {
    return kind == mk::ReduceKind::max || kind == mk::ReduceKind::min;
  }

  static std::string accumulatorType(mk::ReduceKind kind, DType t) {
    if (isExtremum(kind)) return cuda::mathType(t);
    return isFloatingPoint(t) ? "double" : "i64";
  }

  static std::string identity(mk::ReduceKind kind, DType t) {
    const std::string a = accumulatorType(kind, t);
    if (kind == mk::ReduceKind::sum || kind == mk::ReduceKind::mean) return "((" + a + ")0)";
    if (kind == mk::ReduceKind::prod) return "((" + a + ")1)";
    const bool max = kind == mk::ReduceKind::max;
    switch (t) {
      case DType::Float64:
        return max ? "__longlong_as_double((i64)0xfff0000000000000ull)" : "__longlong_as_double((i64)0x7ff0000000000000ull)";
      case DType::Int32: return max ? "((int)0x80000000u)" : "((int)0x7fffffff)";
      case DType::Int64: return max ? "((i64)0x8000000000000000ull)" : "((i64)0x7fffffffffffffffull)";
      default: return max ? "__int_as_float((int)0xff800000u)" : "__int_as_float(0x7f800000)";
    }
  }

  // acc combined with v (both of the accumulator type): integers wrap (in unsigned
  // arithmetic), a NaN is kept.
  static std::string combine(mk::ReduceKind kind, DType t, const std::string& acc, const std::string& v) {
    const bool integral = !isFloatingPoint(t);
    switch (kind) {
      case mk::ReduceKind::sum:
      case mk::ReduceKind::mean:
        return integral ? "(i64)((unsigned long long)" + acc + " + (unsigned long long)" + v + ")" : acc + " + " + v;
      case mk::ReduceKind::prod:
        return integral ? "(i64)((unsigned long long)" + acc + " * (unsigned long long)" + v + ")" : acc + " * " + v;
      case mk::ReduceKind::max: return "((" + v + " != " + v + " || " + v + " > " + acc + ") ? " + v + " : " + acc + ")";
      case mk::ReduceKind::min: return "((" + v + " != " + v + " || " + v + " < " + acc + ") ? " + v + " : " + acc + ")";
    }
    return acc;
  }

  // Folds the elements of `op`'s reduction at `index` into the accumulator `a` (declared
  // before), work items start, start + step, ... (a work item is an element or, for
  // float32 sums, a pair); the loop goes into out_ at indent_, in its own scope.
  void accumulate(mk::ReduceOp op, const Index& index, const std::string& a, const std::string& start,
                  const std::string& step) {
    auto input = tensorType(op.getX());
    std::vector<int64_t> dims(op.getDims().begin(), op.getDims().end());
    std::sort(dims.begin(), dims.end());
    const bool keep = op.getKeepDims();
    const mk::ReduceKind kind = op.getKind();
    const DType t = dtypeOf(op.getX());
    std::vector<int64_t> reducedShape;
    for (int64_t d : dims) reducedShape.push_back(input.getDimSize(d));
    const int64_t n = numel(reducedShape);
    const bool pairs = t == kFloat32 && (kind == mk::ReduceKind::sum || kind == mk::ReduceKind::mean);
    // The input index: kept dims from `index`, reduced dims from `reduced`.
    auto inputIndex = [&](const Index& reduced) {
      Index from;
      size_t kept = 0, r = 0;
      for (int64_t d = 0; d < input.getRank(); ++d) {
        if (std::binary_search(dims.begin(), dims.end(), d)) {
          from.push_back(reduced[r++]);
          if (keep) ++kept;
        } else {
          from.push_back(index[kept++]);
        }
      }
      return from;
    };
    const std::string base = indent_, q = fresh("q");
    scopes_.emplace_back();
    if (pairs) {
      // Work item q: element 32 (q / 16) + q % 16, with its partner 16 further if any.
      const int64_t items = (n + 31) / 32 * 16;
      *out_ += base + "for (ix " + q + " = " + start + "; " + q + " < " + std::to_string(items) + "; " + q +
               " += " + step + ") {\n";
      indent_ = base + "  ";
      const std::string i = fresh("e");
      *out_ += indent_ + "const ix " + i + " = " + q + " / 16 * 32 + " + q + " % 16;\n";
      *out_ += indent_ + "if (" + i + " >= " + std::to_string(n) + ") continue;\n";
      const std::string first = value(op.getX(), inputIndex(unflatten(i, reducedShape, true)));
      *out_ += indent_ + "if (" + i + " + 16 < " + std::to_string(n) + ") {\n";
      indent_ = base + "    ";
      scopes_.emplace_back();
      const std::string second = value(op.getX(), inputIndex(unflatten("(" + i + " + 16)", reducedShape, true)));
      scopes_.pop_back();
      *out_ += indent_ + a + " += (double)(float)(" + first + " + " + second + ");\n";
      *out_ += base + "  } else {\n" + base + "    " + a + " += (double)" + first + ";\n" + base + "  }\n";
    } else {
      *out_ += base + "for (ix " + q + " = " + start + "; " + q + " < " + std::to_string(n) + "; " + q + " += " +
               step + ") {\n";
      indent_ = base + "  ";
      const std::string x = value(op.getX(), inputIndex(unflatten(q, reducedShape, true)));
      *out_ += indent_ + a + " = " + combine(kind, t, a, "(" + accumulatorType(kind, t) + ")" + x) + ";\n";
    }
    *out_ += base + "}\n";
    scopes_.pop_back();
    indent_ = base;
  }

  // The accumulated `total` as the reduction's result value (its math type, rounded).
  static std::string finish(mk::ReduceOp op, const std::string& total) {
    auto input = tensorType(op.getX());
    int64_t n = 1;
    for (int64_t d : op.getDims()) n *= input.getDimSize(d);
    const DType result = dtypeOf(op.getResult());
    const std::string m = cuda::mathType(result);
    return roundTo(result, op.getKind() == mk::ReduceKind::mean
                               ? "(" + m + ")(" + total + " / (double)" + std::to_string(n) + ")"
                               : "(" + m + ")" + total);
  }

  // `op` at `index` (its result's). Where the index is the same for the threads of a row:
  // computed once per row by the whole block into a shared variable, in the row's
  // prologue. Where it varies inside another reduction's loop (layer_norm of a
  // log_softmax: the inner sums inside the outer mean): by each thread alone.
  std::string reduce(mk::ReduceOp op, const Index& index) {
    const mk::ReduceKind kind = op.getKind();
    const DType t = dtypeOf(op.getX());
    const DType result = dtypeOf(op.getResult());
    if (t == kBool) throw Declined{"kiln.reduce of i1"};
    if (kind == mk::ReduceKind::mean && !isFloatingPoint(t)) throw Declined{"kiln.reduce mean of integers"};
    const std::string acc = accumulatorType(kind, t);
    if (op.getDims().empty()) {  // each element alone, through the accumulator type
      const std::string x = value(op.getX(), index);
      const std::string name = fresh("v");
      *out_ += indent_ + "const " + cuda::mathType(result) + " " + name + " = " +
               roundTo(result, "(" + acc + ")" + x) + ";\n";
      return name;
    }
    bool varying = false;
    for (const Idx& i : index) varying = varying || i.varying;
    if (varying && !inReduction_) throw NeedMoreRows{};
    if (varying) {
      const std::string a = fresh("acc");
      *out_ += indent_ + acc + " " + a + " = " + identity(kind, t) + ";\n";
      accumulate(op, index, a, "0", "1");
      const std::string name = fresh("v");
      *out_ += indent_ + "const " + cuda::mathType(result) + " " + name + " = " + finish(op, a) + ";\n";
      ++serialCount_;
      return name;
    }
    const std::string key = keyOf(op.getOperation(), index);
    if (auto it = reductionValues_.find(key); it != reductionValues_.end()) return it->second;

    // The block's loop, in its own scope: nothing computed inside is visible after.
    std::string code;
    std::string* savedOut = out_;
    const std::string savedIndent = indent_;
    std::vector<Scope> savedScopes = std::move(scopes_);
    const bool savedInReduction = inReduction_;
    out_ = &code;
    scopes_.assign(1, {});
    inReduction_ = true;
    const std::string a = fresh("acc");
    code += "    {\n      " + acc + " " + a + " = " + identity(kind, t) + ";\n";
    indent_ = "      ";
    accumulate(op, index, a, "threadIdx.x", "blockDim.x");
    // The block's partial results: shuffles within each warp, then thread 0 across the
    // warps' results in shared memory.
    const std::string scratch = "scratch_" + std::string(acc == "double" ? "f64" : acc == "float" ? "f32" : acc);
    if (scratch_.insert(scratch).second)
      shared_ += "  __shared__ " + acc + " " + scratch + "[32];\n";
    const std::string other = fresh("s");
    code += "      for (int s = 16; s > 0; s >>= 1) {\n";
    code += "        const " + acc + " " + other + " = __shfl_down_sync(0xffffffffu, " + a + ", s);\n";
    code += "        " + a + " = " + combine(kind, t, a, other) + ";\n      }\n";
    code += "      if (lane == 0) " + scratch + "[warp] = " + a + ";\n";
    code += "      __syncthreads();\n";
    const std::string shared = fresh("red");
    shared_ += "  __shared__ " + std::string(cuda::mathType(result)) + " " + shared + ";\n";
    code += "      if (threadIdx.x == 0) {\n";
    code += "        " + acc + " total = " + scratch + "[0];\n";
    code += "        for (int w = 1; w < (int)(blockDim.x >> 5); ++w) total = " +
            combine(kind, t, "total", scratch + "[w]") + ";\n";
    code += "        " + shared + " = " + finish(op, "total") + ";\n";
    code += "      }\n      __syncthreads();\n    }\n";

    out_ = savedOut;
    indent_ = savedIndent;
    scopes_ = std::move(savedScopes);
    inReduction_ = savedInReduction;
    prologue_ += code;
    reductionValues_[key] = shared;
    ++reductionCount_;
    return shared;
  }

  mlir::func::FuncOp kernel_;
  bool inPlace_;
  std::vector<mlir::Value> results_;
  size_t main_ = 0;  // rows kernels: the result whose leading dims are the rows
  std::string indexType_ = "i64";
  std::string* out_ = nullptr;  // where statements go
  std::string indent_;
  std::vector<Scope> scopes_;
  Index identity_;      // the element the current loop writes
  int64_t rowDims_ = 0; // rows kernels: how many leading dims index the row
  bool inReduction_ = false;
  std::map<std::string, std::string> reductionValues_;  // by op and index: the shared variable
  std::string prologue_;  // the row's reductions, in the order they are needed
  std::string shared_;    // __shared__ declarations
  std::set<std::string> scratch_;
  std::vector<bool> unsafeReads_;  // per operand: read where another thread may write it
  int reductionCount_ = 0;
  int serialCount_ = 0;  // reductions each thread computes alone
  int counter_ = 0;
};

}  // namespace

std::string CudaKernel::describe() const {
  std::ostringstream out;
  out << "@" << name << ": ";
  if (rows)
    out << "rows (" << rowCount << " rows of " << rowLength << ", " << reductions << " reduction"
        << (reductions == 1 ? "" : "s") << " per row"
        << (serialReductions ? ", " + std::to_string(serialReductions) + " per thread" : "") << ")";
  else
    out << "elementwise (" << elements << " elements)";
  out << ", " << threads << " threads per block";
  return out.str();
}

std::optional<CudaKernel> generate(mlir::func::FuncOp kernel, bool inPlace, std::string& why) {
  try {
    return Generator(kernel, inPlace).generate();
  } catch (const Declined& declined) {
    why = declined.why;
  }
  return std::nullopt;
}

std::string compileToPtx(const CudaKernel& kernel, const std::string& arch) {
  return cuda::compile(kernel.source, arch, "NVRTC kernel @" + kernel.name, SourceLoc::current());
}

}  // namespace kiln::runtime::nvrtc

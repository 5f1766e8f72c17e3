// The kiln dialect's operations: traits, operands, attributes and syntax.

#ifndef KILN_OPS_TD
#define KILN_OPS_TD

include "dialect/KilnBase.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

// Verifies an op by running its type inference (see KilnOps.h). It comes
// first, so its precise messages win over those of generic traits such as
// Elementwise.
def Kiln_VerifiedByInference : NativeOpTrait<"VerifiedByInference"> {
  let cppNamespace = "::mlir::kiln";
}

// Most ops are pure and infer their result types, checking their operands
// and attributes while doing so (see KilnOps.cpp).
class Kiln_PureOp<string mnemonic, list<Trait> traits = []>
    : Kiln_Op<mnemonic, [Kiln_VerifiedByInference] # traits #
                        [Pure, InferTypeOpAdaptor]>;

//===----------------------------------------------------------------------===//
// Constant
//===----------------------------------------------------------------------===//

def Kiln_ConstantOp : Kiln_PureOp<"constant", [ConstantLike]> {
  let summary = "tensor constant";
  let description = [{
    Produces a tensor from a `dense` or `dense_resource` elements attribute;
    the result type is the attribute's type.

    ```mlir
    %c = kiln.constant dense<1.0> : tensor<4x3xf32>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = "attr-dict $value";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise unary ops: `kiln.<op> %x : type`
//===----------------------------------------------------------------------===//

// `formula` is the math in terms of `x`; `note` adds what it leaves open.
class Kiln_UnaryOp<string mnemonic, Type type, string formula,
                   string note = "", string exampleType = "tensor<4x3xf32>">
    : Kiln_Op<mnemonic, [Pure, Elementwise, SameOperandsAndResultType,
                         DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "elementwise `" # formula # "`";
  let description = [{
    Computes `}] # formula # [{` for every element of `x`. }] # note # [{

    ```mlir
    %y = kiln.}] # mnemonic # [{ %x : }] # exampleType # [{
    ```
  }];
  let arguments = (ins type:$x);
  let results = (outs type:$result);
  let assemblyFormat = "$x attr-dict `:` type($x)";
  let hasFolder = 1;
}

class Kiln_FloatUnaryOp<string mnemonic, string formula, string note = "">
    : Kiln_UnaryOp<mnemonic, Kiln_FloatTensor, formula, note>;

def Kiln_NegOp : Kiln_UnaryOp<"neg", Kiln_NumericTensor, "-x"> {
  let hasCanonicalizer = 1;
}
def Kiln_AbsOp : Kiln_UnaryOp<"abs", Kiln_NumericTensor, "|x|">;
def Kiln_ReluOp : Kiln_UnaryOp<"relu", Kiln_NumericTensor, "max(x, 0)",
    "NaN stays NaN.">;
def Kiln_NotOp : Kiln_UnaryOp<"not", Kiln_BoolOrIntTensor, "~x",
    "Bitwise; for i1 the logical not.", "tensor<4x3xi1>">;
def Kiln_ExpOp : Kiln_FloatUnaryOp<"exp", "e^x">;
def Kiln_LogOp : Kiln_FloatUnaryOp<"log", "ln(x)">;
def Kiln_SqrtOp : Kiln_FloatUnaryOp<"sqrt", "sqrt(x)">;
def Kiln_RsqrtOp : Kiln_FloatUnaryOp<"rsqrt", "1 / sqrt(x)">;
def Kiln_TanhOp : Kiln_FloatUnaryOp<"tanh", "tanh(x)">;
def Kiln_SigmoidOp : Kiln_FloatUnaryOp<"sigmoid", "1 / (1 + e^-x)">;
def Kiln_GeluOp : Kiln_FloatUnaryOp<"gelu", "x * (1 + erf(x / sqrt(2))) / 2",
    "The exact (erf) GELU, not the tanh approximation.">;
def Kiln_SinOp : Kiln_FloatUnaryOp<"sin", "sin(x)">;
def Kiln_CosOp : Kiln_FloatUnaryOp<"cos", "cos(x)">;
def Kiln_FloorOp : Kiln_FloatUnaryOp<"floor", "floor(x)">;

//===----------------------------------------------------------------------===//
// Elementwise binary ops: `kiln.<op> %lhs, %rhs : type`
//===----------------------------------------------------------------------===//

// Operands of elementwise ops share one type, printed once. Where a `?` dim
// of one matches a static dim of the other, both types are printed and the
// result takes the static dim.
class Kiln_BinaryOp<string mnemonic, Type type, string formula, string note,
                    list<Trait> traits, string exampleType>
    : Kiln_PureOp<mnemonic, traits # [Elementwise]> {
  let summary = "elementwise `" # formula # "`";
  let description = [{
    Computes `}] # formula # [{` for every pair of elements of `lhs` and
    `rhs`, which have one element type and one shape (there is no implicit
    broadcasting). }] # note # [{

    ```mlir
    %z = kiln.}] # mnemonic # [{ %x, %y : }] # exampleType # [{
    ```
  }];
  let arguments = (ins type:$lhs, type:$rhs);
  let results = (outs type:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` custom<TypePair>(type($lhs), type($rhs))
  }];
  let hasFolder = 1;
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(::mlir::MLIRContext *,
        ::std::optional<::mlir::Location> loc, Adaptor adaptor,
        ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      return inferBinaryOp(loc, getOperationName(), adaptor.getLhs(),
                           adaptor.getRhs(), types);
    }
  }];
}

class Kiln_ArithOp<string mnemonic, string formula, string note = "",
                   list<Trait> traits = []>
    : Kiln_BinaryOp<mnemonic, Kiln_NumericTensor, formula, note, traits,
                    "tensor<4x3xf32>">;
class Kiln_LogicOp<string mnemonic, string formula>
    : Kiln_BinaryOp<mnemonic, Kiln_BoolOrIntTensor, formula,
                    "Bitwise; for i1 the logical operation.", [Commutative],
                    "tensor<4x3xi1>">;

def Kiln_AddOp : Kiln_ArithOp<"add", "lhs + rhs", "", [Commutative]>;
def Kiln_SubOp : Kiln_ArithOp<"sub", "lhs - rhs">;
def Kiln_MulOp : Kiln_ArithOp<"mul", "lhs * rhs", "", [Commutative]>;
def Kiln_DivOp : Kiln_ArithOp<"div", "lhs / rhs",
    "Integer division truncates toward zero.">;
def Kiln_PowOp : Kiln_ArithOp<"pow", "lhs ^ rhs">;
def Kiln_MaxOp : Kiln_ArithOp<"max", "max(lhs, rhs)",
    "NaN if either operand is NaN.", [Commutative]>;
def Kiln_MinOp : Kiln_ArithOp<"min", "min(lhs, rhs)",
    "NaN if either operand is NaN.", [Commutative]>;
def Kiln_AndOp : Kiln_LogicOp<"and", "lhs & rhs">;
def Kiln_OrOp : Kiln_LogicOp<"or", "lhs | rhs">;

//===----------------------------------------------------------------------===//
// Compare, select, convert
//===----------------------------------------------------------------------===//

def Kiln_CompareOp : Kiln_PureOp<"compare", [Elementwise]> {
  let summary = "elementwise comparison";
  let description = [{
    Compares `lhs` and `rhs` element by element (`eq ne lt le gt ge`) and
    produces an i1 tensor of their shape. Integers compare as signed, i1 as
    unsigned, floats as IEEE ordered comparisons (`ne` is true for NaN).

    ```mlir
    %m = kiln.compare lt, %x, %y : tensor<4x3xf32>  // -> tensor<4x3xi1>
    ```
  }];
  let arguments = (ins Kiln_CompareDirectionAttr:$direction, Kiln_Tensor:$lhs,
                       Kiln_Tensor:$rhs);
  let results = (outs Kiln_BoolTensor:$result);
  let assemblyFormat = [{
    `` $direction `,` $lhs `,` $rhs attr-dict `:`
    custom<TypePair>(type($lhs), type($rhs))
  }];
  let hasFolder = 1;
}

def Kiln_SelectOp : Kiln_PureOp<"select", [Elementwise]> {
  let summary = "elementwise choice";
  let description = [{
    Takes the element of `a` where `cond` is true and of `b` elsewhere;
    `cond`, `a` and `b` have one shape.

    ```mlir
    %v = kiln.select %m, %x, %y : tensor<4x3xi1>, tensor<4x3xf32>
    ```
  }];
  let arguments = (ins Kiln_BoolTensor:$cond, Kiln_Tensor:$a, Kiln_Tensor:$b);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = [{
    $cond `,` $a `,` $b attr-dict `:` type($cond) `,`
    custom<TypePair>(type($a), type($b))
  }];
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def Kiln_ConvertOp : Kiln_PureOp<"convert", [Elementwise]> {
  let summary = "element type conversion";
  let description = [{
    Converts every element of `x` to `dtype`. Floats round to nearest even,
    floats to integers truncate toward zero, anything to i1 tests `!= 0`,
    i1 becomes 0 or 1 and integers sign-extend or truncate.

    ```mlir
    %h = kiln.convert %x : tensor<4x3xf32> to f16
    ```
  }];
  let arguments = (ins Kiln_Tensor:$x, Kiln_ElementTypeAttr:$dtype);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x) `to` $dtype";
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

//===----------------------------------------------------------------------===//
// Shape ops
//===----------------------------------------------------------------------===//

def Kiln_BroadcastInDimOp : Kiln_PureOp<"broadcast_in_dim"> {
  let summary = "broadcast to a shape";
  let description = [{
    Broadcasts `x` to `shape`: operand dimension `i` becomes result
    dimension `dims[i]` (`dims` strictly increasing) and must be 1 or of the
    same size; the other result dimensions are new. An entry of `shape` may
    be an `index` value (a dynamic size, `?` in the result type).

    ```mlir
    %b = kiln.broadcast_in_dim %r, dims = [1], shape = [4, 3] : tensor<3xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$x, Variadic<Index>:$dynamic_shape,
                       DenseI64ArrayAttr:$dims, DenseI64ArrayAttr:$shape);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = [{
    $x `,` `dims` `=` $dims `,` `shape` `=`
    custom<DynamicIndexList>($dynamic_shape, $shape) attr-dict `:` type($x)
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Value":$x, "::llvm::ArrayRef<int64_t>":$dims,
                   "::llvm::ArrayRef<int64_t>":$shape), [{
      build($_builder, $_state, x, ::mlir::ValueRange(), dims, shape);
    }]>,
    OpBuilder<(ins "::mlir::Value":$x, "::mlir::DenseI64ArrayAttr":$dims,
                   "::mlir::DenseI64ArrayAttr":$shape), [{
      build($_builder, $_state, x, ::mlir::ValueRange(), dims, shape);
    }]>
  ];
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def Kiln_ReshapeOp : Kiln_PureOp<"reshape"> {
  let summary = "reinterpret the shape, keeping row-major element order";
  let description = [{
    An entry of `shape` may be an `index` value (a dynamic size, `?` in the
    result type); the element counts must then agree at run time.

    ```mlir
    %rs = kiln.reshape %x, shape = [2, 6] : tensor<4x3xf32>
    %fl = kiln.reshape %y, shape = [%n] : tensor<?x3xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$x, Variadic<Index>:$dynamic_shape,
                       DenseI64ArrayAttr:$shape);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = [{
    $x `,` `shape` `=` custom<DynamicIndexList>($dynamic_shape, $shape)
    attr-dict `:` type($x)
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Value":$x, "::llvm::ArrayRef<int64_t>":$shape), [{
      build($_builder, $_state, x, ::mlir::ValueRange(), shape);
    }]>,
    OpBuilder<(ins "::mlir::Value":$x, "::mlir::DenseI64ArrayAttr":$shape), [{
      build($_builder, $_state, x, ::mlir::ValueRange(), shape);
    }]>
  ];
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def Kiln_TransposeOp : Kiln_PureOp<"transpose"> {
  let summary = "permute dimensions";
  let description = [{
    Result dimension `i` is operand dimension `permutation[i]`.

    ```mlir
    %t = kiln.transpose %x, permutation = [1, 0] : tensor<4x3xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$x, DenseI64ArrayAttr:$permutation);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = [{
    $x `,` `permutation` `=` $permutation attr-dict `:` type($x)
  }];
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def Kiln_SliceOp : Kiln_PureOp<"slice"> {
  let summary = "strided slice";
  let description = [{
    Takes elements `start[i], start[i] + stride[i], ...` below `limit[i]` in
    every dimension `i`. An entry of `limit` may be an `index` value (a
    dynamic bound: the whole of a `?` dim, say), which makes that result dim
    `?`; it must then be within the operand at run time.

    ```mlir
    %sl = kiln.slice %x, start = [0, 1], limit = [4, 3], stride = [2, 1]
        : tensor<4x3xf32>
    %cols = kiln.slice %y, start = [0, 0], limit = [%n, 2], stride = [1, 1]
        : tensor<?x3xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$x, Variadic<Index>:$dynamic_limit,
                       DenseI64ArrayAttr:$start, DenseI64ArrayAttr:$limit,
                       DenseI64ArrayAttr:$stride);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = [{
    $x `,` `start` `=` $start `,` `limit` `=`
    custom<DynamicIndexList>($dynamic_limit, $limit) `,` `stride` `=` $stride
    attr-dict `:` type($x)
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Value":$x, "::llvm::ArrayRef<int64_t>":$start,
                   "::llvm::ArrayRef<int64_t>":$limit, "::llvm::ArrayRef<int64_t>":$stride), [{
      build($_builder, $_state, x, ::mlir::ValueRange(), start, limit, stride);
    }]>
  ];
}

def Kiln_ConcatOp : Kiln_PureOp<"concat"> {
  let summary = "concatenate along one dimension";
  let description = [{
    ```mlir
    %cc = kiln.concat(%x, %y) dim = 0 : tensor<4x3xf32>, tensor<4x3xf32>
    ```
  }];
  let arguments = (ins Variadic<Kiln_Tensor>:$xs, I64Attr:$dim);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = "`(` $xs `)` `dim` `=` $dim attr-dict `:` type($xs)";
}

//===----------------------------------------------------------------------===//
// Reductions and contractions
//===----------------------------------------------------------------------===//

def Kiln_ReduceOp : Kiln_PureOp<"reduce"> {
  let summary = "reduce over dimensions";
  let description = [{
    Reduces `x` over `dims` (in increasing order) with `sum max min prod
    mean` (`mean` divides by the product of the reduced extents and needs
    floats; `max` and `min`, which have no identity, need reduced extents
    other than 0). The reduced dimensions are dropped, or kept with size 1
    under `keep_dims`.

    ```mlir
    %rd = kiln.reduce sum %x, dims = [1] : tensor<4x3xf32>             // -> tensor<4xf32>
    %rk = kiln.reduce mean %x, dims = [1] keep_dims : tensor<4x3xf32>  // -> tensor<4x1xf32>
    ```
  }];
  let arguments = (ins Kiln_ReduceKindAttr:$kind, Kiln_NumericTensor:$x,
                       DenseI64ArrayAttr:$dims, UnitAttr:$keep_dims);
  let results = (outs Kiln_NumericTensor:$result);
  // A float splat folds where the result is exact (a count: a sum of ones).
  let hasFolder = 1;
  let assemblyFormat = [{
    `` $kind $x `,` `dims` `=` $dims (`keep_dims` $keep_dims^)? attr-dict `:`
    type($x)
  }];
}

def Kiln_MatmulOp : Kiln_PureOp<"matmul"> {
  let summary = "batched matrix product";
  let description = [{
    Multiplies the last two dimensions of `a` (`[..., M, K]`, or `[..., K, M]`
    under `transpose_a`) and `b` (`[..., K, N]`, or `[..., N, K]` under
    `transpose_b`); the leading (batch) dimensions of both are equal.

    ```mlir
    %mm = kiln.matmul %a, %b : tensor<2x4x3xf32>, tensor<2x3x5xf32>
    %mt = kiln.matmul %a, %w transpose_b : tensor<8x3xf32>, tensor<5x3xf32>
    ```
  }];
  let arguments = (ins Kiln_NumericTensor:$a, Kiln_NumericTensor:$b,
                       UnitAttr:$transpose_a, UnitAttr:$transpose_b);
  let results = (outs Kiln_NumericTensor:$result);
  let assemblyFormat = [{
    $a `,` $b (`transpose_a` $transpose_a^)? (`transpose_b` $transpose_b^)?
    attr-dict `:` type($a) `,` type($b)
  }];
}

def Kiln_AddmmOp : Kiln_PureOp<"addmm"> {
  let summary = "matrix product plus a bias row, optionally through relu";
  let description = [{
    `a` (`[M, K]`, or `[K, M]` under `transpose_a`) times `b` (`[K, N]`, or
    `[N, K]` under `transpose_b`), plus `bias` (`[N]`) added to every row,
    then `max(x, 0)` under `relu`: one library call with the bias and the
    activation as epilogues (oneDNN post-ops on CPU). Each step rounds as the
    `kiln.matmul`, `kiln.add` and `kiln.relu` it stands for.

    ```mlir
    %y = kiln.addmm %x, %w, %b transpose_b relu
           : tensor<8x3xf32>, tensor<5x3xf32>, tensor<5xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$a, Kiln_FloatTensor:$b,
                       Kiln_FloatTensor:$bias, UnitAttr:$transpose_a,
                       UnitAttr:$transpose_b, UnitAttr:$relu);
  let results = (outs Kiln_FloatTensor:$result);
  let assemblyFormat = [{
    $a `,` $b `,` $bias (`transpose_a` $transpose_a^)? (`transpose_b` $transpose_b^)?
    (`relu` $relu^)? attr-dict `:` type($a) `,` type($b) `,` type($bias)
  }];
}

def Kiln_Conv2dOp : Kiln_PureOp<"conv2d"> {
  let summary = "2-D convolution (NCHW input, OIHW weights)";
  let description = [{
    `padding` is `[h_low, h_high, w_low, w_high]`; with `groups` g the
    weight shape is `[O, C / g, KH, KW]`. An optional `bias` (`[O]`) is added
    to every output channel and `relu` applies `max(x, 0)` after it: the
    library call's epilogues (oneDNN's bias argument on CPU).

    ```mlir
    %cv = kiln.conv2d %img, %w, stride = [1, 1], padding = [1, 1, 1, 1],
            dilation = [1, 1], groups = 1
            : tensor<1x3x8x8xf32>, tensor<16x3x3x3xf32>
    %cb = kiln.conv2d %img, %w bias(%b : tensor<16xf32>), stride = [1, 1],
            padding = [1, 1, 1, 1], dilation = [1, 1], groups = 1 relu
            : tensor<1x3x8x8xf32>, tensor<16x3x3x3xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$x, Kiln_FloatTensor:$w,
                       Optional<Kiln_FloatTensor>:$bias,
                       DenseI64ArrayAttr:$stride, DenseI64ArrayAttr:$padding,
                       DenseI64ArrayAttr:$dilation, I64Attr:$groups,
                       UnitAttr:$relu);
  let results = (outs Kiln_FloatTensor:$result);
  let assemblyFormat = [{
    $x `,` $w (`bias` `(` $bias^ `:` type($bias) `)`)? `,` `stride` `=` $stride
    `,` `padding` `=` $padding `,` `dilation` `=` $dilation `,` `groups` `=`
    $groups (`relu` $relu^)? attr-dict `:` type($x) `,` type($w)
  }];
}

def Kiln_Pool2dOp : Kiln_PureOp<"pool2d"> {
  let summary = "2-D max or average pooling (NCHW)";
  let description = [{
    `padding` is `[h_low, h_high, w_low, w_high]`.

    ```mlir
    %pl = kiln.pool2d max %img, window = [2, 2], stride = [2, 2],
            padding = [0, 0, 0, 0] : tensor<1x3x8x8xf32>
    ```
  }];
  let arguments = (ins Kiln_PoolKindAttr:$kind, Kiln_FloatTensor:$x,
                       DenseI64ArrayAttr:$window, DenseI64ArrayAttr:$stride,
                       DenseI64ArrayAttr:$padding);
  let results = (outs Kiln_FloatTensor:$result);
  let assemblyFormat = [{
    `` $kind $x `,` `window` `=` $window `,` `stride` `=` $stride `,`
    `padding` `=` $padding attr-dict `:` type($x)
  }];
}

def Kiln_GatherOp : Kiln_PureOp<"gather"> {
  let summary = "take slices along one dimension (numpy.take)";
  let description = [{
    The result shape is `x.shape[:dim] ++ indices.shape ++ x.shape[dim+1:]`,
    which covers `index_select` (1-D indices) and embedding lookups.

    ```mlir
    %g = kiln.gather %table[%ids], dim = 0 : tensor<10x4xf32>, tensor<2x3xi64>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$x, Kiln_IndexTensor:$indices,
                       I64Attr:$dim);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = [{
    $x `[` $indices `]` `,` `dim` `=` $dim attr-dict `:` type($x) `,`
    type($indices)
  }];
}

def Kiln_ScatterAddOp : Kiln_PureOp<"scatter_add"> {
  let summary = "sum slices into zeros along one dimension (gather's adjoint)";
  let description = [{
    The result has the shape of `updates` with the `rank(indices)` dimensions
    from `dim` on replaced by one of length `size`; it is zero except where
    an index names a position, which holds the sum of the slices of `updates`
    whose index names it. This is the gradient of `kiln.gather` with the
    same `dim`, computed without a one-hot matrix. `size` may be an `index`
    value (a dynamic size, `?` in the result type).

    ```mlir
    %s = kiln.scatter_add %grad[%ids], dim = 0, size = 10
           : tensor<2x3x4xf32>, tensor<2x3xi64>
    ```
  }];
  let arguments = (ins Kiln_NumericTensor:$updates, Kiln_IndexTensor:$indices,
                       Optional<Index>:$dynamic_size, I64Attr:$dim, I64Attr:$size);
  let results = (outs Kiln_NumericTensor:$result);
  let assemblyFormat = [{
    $updates `[` $indices `]` `,` `dim` `=` $dim `,` `size` `=`
    custom<DynamicSize>($dynamic_size, $size)
    attr-dict `:` type($updates) `,` type($indices)
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Value":$updates, "::mlir::Value":$indices,
                   "int64_t":$dim, "int64_t":$size), [{
      build($_builder, $_state, updates, indices, ::mlir::Value(), dim, size);
    }]>
  ];
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

// Not Pure: every rank of the job must run the same collectives in the same
// order, so none may be removed, merged with another or moved past another.
def Kiln_AllReduceOp : Kiln_Op<"all_reduce", [Kiln_VerifiedByInference,
                                              InferTypeOpAdaptor]> {
  let summary = "combine a tensor over the ranks of an MPI job";
  let description = [{
    Every rank of the job contributes its `x`; the result, the same on every
    rank, is their elementwise `sum`, `mean` (the sum divided by the number
    of ranks; floats only) or `max` (on `i1`, sum and max are a logical or).
    It is the gradient averaging of a data-parallel training step. It has
    side effects (the other ranks wait for it): it is never folded, fused,
    removed or reordered with another collective, and a compiled program runs
    it as a host step of its schedule, blocking until every rank took part.

    ```mlir
    %g = kiln.all_reduce mean %grad : tensor<4x3xf32>
    ```
  }];
  let arguments = (ins Kiln_AllReduceKindAttr:$kind, Kiln_Tensor:$x);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = "`` $kind $x attr-dict `:` type($x)";
}

def Kiln_AllReduceStartOp : Kiln_Op<"all_reduce_start",
                                    [Kiln_VerifiedByInference, InferTypeOpAdaptor]> {
  let summary = "start a non-blocking kiln.all_reduce";
  let description = [{
    Starts combining `x` over the ranks as `kiln.all_reduce` does and returns
    at once. The result's buffer holds the combined values only after the
    `kiln.wait` that takes it: until then the other ranks write into it, so
    its only user must be that wait. Between the two, the host schedule runs
    whatever else it has (the rest of the backward, other buckets' starts).

    ```mlir
    %r = kiln.all_reduce_start mean %grad : tensor<4x3xf32>
    %g = kiln.wait %r : tensor<4x3xf32>
    ```
  }];
  let arguments = (ins Kiln_AllReduceKindAttr:$kind, Kiln_Tensor:$x);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = "`` $kind $x attr-dict `:` type($x)";
}

def Kiln_WaitOp : Kiln_Op<"wait", [Kiln_VerifiedByInference, InferTypeOpAdaptor]> {
  let summary = "wait for a kiln.all_reduce_start";
  let description = [{
    Blocks until the collective that `kiln.all_reduce_start` started on `x`
    is complete on this rank, and returns its values.

    ```mlir
    %g = kiln.wait %r : tensor<4x3xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$x);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x)";
}

//===----------------------------------------------------------------------===//
// Random numbers
//===----------------------------------------------------------------------===//

def Kiln_RngOp : Kiln_PureOp<"rng"> {
  let summary = "counter-based random tensor";
  let description = [{
    Draws a tensor of `shape` and `dtype` from `distribution` with Philox
    4x32-10 keyed by `key` (`[seed, offset]`), and returns the advanced key
    for the next draw. `params`: uniform `[low, high]`, normal `[mean, std]`,
    bernoulli `[p]`. An entry of `shape` may be an `index` value (a dynamic
    size, `?` in the sample's type).

    ```mlir
    %smp, %key2 = kiln.rng normal %key, shape = [4, 4], dtype = f32,
                    params = [0.0, 1.0] : tensor<2xi64>
    ```
  }];
  let arguments = (ins Kiln_RngDistributionAttr:$distribution,
                       Kiln_RngKey:$key, Variadic<Index>:$dynamic_shape,
                       DenseI64ArrayAttr:$shape,
                       Kiln_ElementTypeAttr:$dtype, DenseF64ArrayAttr:$params);
  let results = (outs Kiln_Tensor:$sample, Kiln_RngKey:$new_key);
  let assemblyFormat = [{
    `` $distribution $key `,` `shape` `=`
    custom<DynamicIndexList>($dynamic_shape, $shape) `,` `dtype` `=` $dtype `,`
    `params` `=` $params attr-dict `:` type($key)
  }];
  let builders = [
    OpBuilder<(ins "::mlir::kiln::RngDistribution":$distribution,
                   "::mlir::Value":$key, "::llvm::ArrayRef<int64_t>":$shape,
                   "::mlir::Type":$dtype, "::llvm::ArrayRef<double>":$params), [{
      build($_builder, $_state, distribution, key, ::mlir::ValueRange(), shape,
            dtype, params);
    }]>
  ];
}

def Kiln_IotaOp : Kiln_PureOp<"iota"> {
  let summary = "0, 1, 2, ... along one dimension";
  let description = [{
    A tensor of `shape` and element type `dtype` whose element at index
    `(i_0, ..., i_n)` is `i_dim` (`arange` along `dim`, broadcast along the
    others). An entry of `shape` may be an `index` value (a dynamic size).
    Traces record `arange` as a constant; this op is what a constant of a
    dynamic length becomes (docs/ARCHITECTURE.md, "Dynamic shapes").

    ```mlir
    %i = kiln.iota dim = 0, shape = [%n], dtype = i64
    ```
  }];
  let arguments = (ins Variadic<Index>:$dynamic_shape, I64Attr:$dim,
                       DenseI64ArrayAttr:$shape, Kiln_ElementTypeAttr:$dtype);
  let results = (outs Kiln_NumericTensor:$result);
  let assemblyFormat = [{
    `dim` `=` $dim `,` `shape` `=` custom<DynamicIndexList>($dynamic_shape, $shape)
    `,` `dtype` `=` $dtype attr-dict
  }];
}

//===----------------------------------------------------------------------===//
// Regions and host code
//===----------------------------------------------------------------------===//

def Kiln_FusionOp : Kiln_Op<"fusion", [
    IsolatedFromAbove, SingleBlock, RecursiveMemoryEffects,
    InferTypeOpAdaptor]> {
  let summary = "a group of ops compiled as one kernel";
  let description = [{
    The body's arguments are the `inputs`; its `kiln.yield` gives the
    results.

    ```mlir
    %f = kiln.fusion(%x, %y) : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32> {
    ^bb0(%a: tensor<4x3xf32>, %b: tensor<4x3xf32>):
      %0 = kiln.mul %a, %b : tensor<4x3xf32>
      kiln.yield %0 : tensor<4x3xf32>
    }
    ```
  }];
  // Index inputs are sizes of a program with `?` dims (tensor.dim of the
  // host's values and arith on them), which the body's dynamic size operands
  // read; a kernel outlined from it takes them as index arguments.
  let arguments = (ins Variadic<AnyTypeOf<[Kiln_Tensor, Index]>>:$inputs);
  let results = (outs Variadic<Kiln_Tensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    `(` $inputs `)` attr-dict `:` functional-type($inputs, results) $body
  }];
  // The body builder creates the block's ops and its `kiln.yield`; the
  // results are inferred from the yield.
  let skipDefaultBuilders = 1;
  let builders = [
    OpBuilder<(ins "::mlir::ValueRange":$inputs,
      "::llvm::function_ref<void(::mlir::OpBuilder &, ::mlir::Location, "
      "::mlir::ValueRange)>":$bodyBuilder)>
  ];
  // Compares the body with the inputs and the yield with the results; runs
  // before InferTypeOpInterface's check, which waits for the regions.
  let hasVerifier = 1;
}

def Kiln_YieldOp : Kiln_Op<"yield", [Pure, Terminator, ReturnLike,
                                      HasParent<"FusionOp">]> {
  let summary = "results of a kiln.fusion body";
  let description = [{
    ```mlir
    kiln.yield %0 : tensor<4x3xf32>
    ```
  }];
  let arguments = (ins Variadic<Kiln_Tensor>:$values);
  let assemblyFormat = "attr-dict ($values^ `:` type($values))?";
}

def Kiln_CallbackOp : Kiln_Op<"callback"> {
  let summary = "call host C++ code left out of the trace";
  let description = [{
    Calls entry `callee` of the trace's table of host callbacks. It has
    unknown side effects, and its result types are the host function's, so
    its builder takes them (as `func.call`'s does).

    ```mlir
    %cb = kiln.callback(%x) callee = 0 : (tensor<4x3xf32>) -> tensor<4x3xf32>
    ```
  }];
  let arguments = (ins Variadic<Kiln_Tensor>:$inputs, I64Attr:$callee);
  let results = (outs Variadic<Kiln_Tensor>:$results);
  let assemblyFormat = [{
    `(` $inputs `)` `callee` `=` $callee attr-dict `:`
    functional-type($inputs, results)
  }];
  let hasVerifier = 1;
}

#endif // KILN_OPS_TD

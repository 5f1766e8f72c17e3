// The kiln dialect, its enum attributes and the tensor types its ops accept.

#ifndef KILN_BASE_TD
#define KILN_BASE_TD

include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"
include "mlir/IR/OpBase.td"

def Kiln_Dialect : Dialect {
  let name = "kiln";
  let cppNamespace = "::mlir::kiln";
  let summary = "Static tensor graphs traced from Kiln's eager C++ frontend.";
  let description = [{
    Values are builtin ranked tensors with f32, f64, f16, bf16, i1, i32 or i64
    elements. Broadcasting and conversions are explicit ops, so every pass sees
    exact shapes. Every op infers its result types; only `kiln.callback`,
    whose results belong to a host function, takes them from its builder.
  }];
  let useDefaultAttributePrinterParser = 1;
  let hasConstantMaterializer = 1;

  // The host ABI: discardable attributes the tracer, the passes and the runtime
  // put on functions, their arguments and results, and the ops of a planned
  // host schedule. The dialect verifies each (KilnHostAbi.cpp); any other
  // `kiln.` discardable attribute is an error.
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
  let extraClassDeclaration = [{
    /// On an argument: it is the traced function's input #n (i64 n).
    static StringRef getInputAttrName() { return "kiln.input"; }
    /// On an argument: it is the state (parameter, buffer) of this name (string).
    static StringRef getStateAttrName() { return "kiln.state"; }
    /// On a result: it is the traced function's output #n (i64 n).
    static StringRef getOutputAttrName() { return "kiln.output"; }
    /// On a result: the new value of the state argument of this name (string).
    static StringRef getStateUpdateAttrName() { return "kiln.state_update"; }
    /// On a result: the gradient left in .grad of this name, "<state>.grad" (string).
    static StringRef getGradUpdateAttrName() { return "kiln.grad_update"; }
    /// On a result: created tensor #n that outlives the call, a warm-up's (i64 n).
    static StringRef getCreatedAttrName() { return "kiln.created"; }
    /// On an argument or result: its name in a dumped graph (string).
    static StringRef getNameAttrName() { return "kiln.name"; }
    /// On a kernel function: who compiles it, "fusion" (the backend's codegen), "library"
    /// (a vendor library) or "external" (a KernelCodegen such as HALIDE's, run as a host
    /// op) (string).
    static StringRef getKernelAttrName() { return "kiln.kernel"; }
    /// On a kiln.fusion and its kernel: leading dims kiln-tile-rows tiles (i64 >= 1).
    static StringRef getRowDimsAttrName() { return "kiln.row_dims"; }
    /// On a planned host function (and its LLVM lowering): arena size (i64 bytes).
    static StringRef getArenaBytesAttrName() { return "kiln.arena_bytes"; }
    /// On a planned host function: bytes its buffers take without reuse (i64).
    static StringRef getNaiveBytesAttrName() { return "kiln.naive_bytes"; }
    /// On an op of a planned host function: per result, its arena offset, -1
    /// (the caller's buffer) or -2 (its state argument, in place) (array<i64>).
    static StringRef getOffsetsAttrName() { return "kiln.offsets"; }
    /// On a result of a fusion kernel some call writes in place over a state:
    /// the kernel operands that read that state, whose memory the result
    /// overwrites (array<i64>; set by kiln-plan-memory).
    static StringRef getOverwritesAttrName() { return "kiln.overwrites"; }
  }];
}

//===----------------------------------------------------------------------===//
// Element types and tensors
//===----------------------------------------------------------------------===//

def Kiln_Float : AnyTypeOf<[F32, F64, F16, BF16], "f32, f64, f16 or bf16">;
def Kiln_Int : AnyTypeOf<[I32, I64], "i32 or i64">;
def Kiln_BoolOrInt : AnyTypeOf<[I1, I32, I64], "i1, i32 or i64">;
def Kiln_Numeric : AnyTypeOf<[F32, F64, F16, BF16, I32, I64],
                             "f32, f64, f16, bf16, i32 or i64">;
def Kiln_Element : AnyTypeOf<[F32, F64, F16, BF16, I1, I32, I64],
                             "f32, f64, f16, bf16, i1, i32 or i64">;

def Kiln_Tensor : RankedTensorOf<[Kiln_Element]>;
def Kiln_FloatTensor : RankedTensorOf<[Kiln_Float]>;
def Kiln_NumericTensor : RankedTensorOf<[Kiln_Numeric]>;
def Kiln_BoolOrIntTensor : RankedTensorOf<[Kiln_BoolOrInt]>;
def Kiln_IndexTensor : RankedTensorOf<[Kiln_Int]>;
def Kiln_BoolTensor : RankedTensorOf<[I1]>;
def Kiln_RngKey : 1DTensorOf<[I64]>;

// A TypeAttr holding one of the dialect's element types.
def Kiln_ElementTypeAttr : TypeAttrOf<Kiln_Element>;

//===----------------------------------------------------------------------===//
// Enumerations (`#kiln<direction lt>` in generic form, a bare keyword in ops)
//===----------------------------------------------------------------------===//

// An enum attribute prints the space that separates it from its mnemonic in
// generic form, so op formats put an empty literal (``) before one: without
// it the op name would be followed by two spaces.
class Kiln_EnumAttr<I32EnumAttr enumInfo, string mnemonic>
    : EnumAttr<Kiln_Dialect, enumInfo, mnemonic>;

def Kiln_CompareDirection : I32EnumAttr<"CompareDirection",
    "comparison direction", [
      I32EnumAttrCase<"eq", 0>, I32EnumAttrCase<"ne", 1>,
      I32EnumAttrCase<"lt", 2>, I32EnumAttrCase<"le", 3>,
      I32EnumAttrCase<"gt", 4>, I32EnumAttrCase<"ge", 5>]> {
  let cppNamespace = "::mlir::kiln";
  let genSpecializedAttr = 0;
}
def Kiln_CompareDirectionAttr
    : Kiln_EnumAttr<Kiln_CompareDirection, "direction">;

def Kiln_ReduceKind : I32EnumAttr<"ReduceKind", "reduction kind", [
      I32EnumAttrCase<"sum", 0>, I32EnumAttrCase<"max", 1>,
      I32EnumAttrCase<"min", 2>, I32EnumAttrCase<"prod", 3>,
      I32EnumAttrCase<"mean", 4>]> {
  let cppNamespace = "::mlir::kiln";
  let genSpecializedAttr = 0;
}
def Kiln_ReduceKindAttr : Kiln_EnumAttr<Kiln_ReduceKind, "reduce_kind">;

def Kiln_PoolKind : I32EnumAttr<"PoolKind", "pooling kind", [
      I32EnumAttrCase<"max", 0>, I32EnumAttrCase<"avg", 1>]> {
  let cppNamespace = "::mlir::kiln";
  let genSpecializedAttr = 0;
}
def Kiln_PoolKindAttr : Kiln_EnumAttr<Kiln_PoolKind, "pool_kind">;

def Kiln_RngDistribution : I32EnumAttr<"RngDistribution",
    "random distribution", [
      I32EnumAttrCase<"uniform", 0>, I32EnumAttrCase<"normal", 1>,
      I32EnumAttrCase<"bernoulli", 2>]> {
  let cppNamespace = "::mlir::kiln";
  let genSpecializedAttr = 0;
}
def Kiln_RngDistributionAttr
    : Kiln_EnumAttr<Kiln_RngDistribution, "distribution">;

def Kiln_AllReduceKind : I32EnumAttr<"AllReduceKind",
    "how kiln.all_reduce combines the ranks' values", [
      I32EnumAttrCase<"sum", 0>, I32EnumAttrCase<"mean", 1>,
      I32EnumAttrCase<"max", 2>]> {
  let cppNamespace = "::mlir::kiln";
  let genSpecializedAttr = 0;
}
def Kiln_AllReduceKindAttr
    : Kiln_EnumAttr<Kiln_AllReduceKind, "all_reduce_kind">;

//===----------------------------------------------------------------------===//
// Base op
//===----------------------------------------------------------------------===//

class Kiln_Op<string mnemonic, list<Trait> traits = []>
    : Op<Kiln_Dialect, mnemonic, traits>;

#endif // KILN_BASE_TD

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

//===----------------------------------------------------------------------===//
// Base op
//===----------------------------------------------------------------------===//

class Kiln_Op<string mnemonic, list<Trait> traits = []>
    : Op<Kiln_Dialect, mnemonic, traits>;

#endif // KILN_BASE_TD

// What makes two traced programs the same program for the compile caches (in memory and on
// disk): their ops, types and attributes, not their function's name, their ops' source
// locations or the names of their state. docs/ARCHITECTURE.md, "Compiler passes".
#pragma once

#include <string>
#include <string_view>

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace kiln::runtime {

// The name every compiled program's host function takes ("main": `kiln_main`, kernels
// `main_kernel_<n>`), so that the compiled code of two programs of different names is the
// same bytes and one can run the other's.
inline constexpr std::string_view kProgramSymbol = "main";

// Renames `module`'s one host function to kProgramSymbol.
void nameCanonically(mlir::ModuleOp module);

// `module` as MLIR bytecode with every location unknown and each state named by its argument
// index (kiln.state and kiln.state_update alike): what the cache key hashes. "" if it
// cannot be written.
std::string canonicalBytecode(mlir::ModuleOp module);

// The locations of `module`'s block arguments and ops, in walk order: two programs with the
// same canonical bytecode list the same number, position for position.
mlir::ArrayAttr sourceLocations(mlir::ModuleOp module);

// Rewrites the locations of `planned` (planned from a program whose sourceLocations were
// `compiled`) to those of the program whose sourceLocations are `traced`, position for
// position, so that errors of a program that reuses another's code name its own lines.
// A location the compiled program had at two positions takes the first one's replacement.
void relocate(mlir::ModuleOp planned, mlir::ArrayAttr compiled, mlir::ArrayAttr traced);

// `planned` (planned from a program whose sourceLocations were `traced`) as MLIR bytecode
// that carries those locations, for the caches; "" if it cannot be written.
std::string plannedBytecode(mlir::ModuleOp planned, mlir::ArrayAttr traced);

// plannedBytecode's module read back in `traced`'s context with its locations relocated to
// `traced` (the program reusing it); null if the bytes do not parse.
mlir::OwningOpRef<mlir::ModuleOp> readPlanned(std::string_view bytes, mlir::ArrayAttr traced);

// The compile options that change compiled code, as a cache key part (with
// quickKernelElements(), read here).
std::string compileOptionsKey(bool fuse, unsigned fuseMaxInputs, unsigned llvmOptLevel,
                              bool timeKernels);

}  // namespace kiln::runtime

// Writing traced programs to files and loading them back (jit::dump / jit::load).
#pragma once

#include <string>
#include <string_view>

#include "kiln/jit/Trace.h"
#include "mlir/IR/BuiltinOps.h"

namespace kiln::jit {

// Writes a copy of `module` (one func of kiln ops, no state arguments) to `path` in the
// chosen format, constants turned into dense_resource blobs, kiln.name on arguments and
// results, written to a temporary name and renamed. IOError naming the path on failure.
void dumpModule(mlir::ModuleOp module, const std::string& path, const DumpOptions& options,
                const SourceLoc& loc);

// kiln-run takes an input's name as a flag (--input NAME=FILE) and writes an output to
// DIR/NAME.npy, so a name is not empty and has no '/', '=' or NUL: dump() writes no other
// names and load() refuses a file that holds one (kUnusableName says why).
bool isUsableName(std::string_view name);
inline constexpr const char* kUnusableName =
    "is not usable as a file name and flag (empty, or has '/', '=' or NUL)";

// Bytecode that dump() writes names its producer "Kiln xxh3=<16 hex digits>": a hash of
// every byte after the header, so load() refuses a damaged file before MLIR's bytecode
// reader, which trusts the counts a file holds (docs/FUZZING.md), reads it.
inline constexpr std::string_view kBytecodeProducer = "Kiln xxh3=0000000000000000";
// Writes the hash into the producer of bytecode written with kBytecodeProducer.
void stampBytecode(std::string& bytes);

enum class BytecodeCheck {
  NotBytecode,  // no bytecode magic: text, or not MLIR at all
  Verified,     // dump()'s bytecode, hash matching
  Unstamped,    // bytecode some other writer made (kiln-opt, mlir-opt): nothing to check
  Corrupt,      // a header that does not parse, or a hash that does not match
};
// What `bytes` are; `producer` gets the producer string of bytecode.
BytecodeCheck checkBytecode(std::string_view bytes, std::string& producer);

}  // namespace kiln::jit

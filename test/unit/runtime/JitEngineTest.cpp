// JitEngine: LLVM-dialect modules compiled for the host, linked, called; errors as CompileError.
#include "runtime/JitEngine.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <algorithm>
#include <regex>
#include <thread>
#include <vector>

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/BinaryFormat/ELF.h"
#include "llvm/Object/ObjectFile.h"

namespace kiln::runtime {
namespace {

// Calls back into the process, as kernels call the runtime's kiln_rt_* functions.
extern "C" int64_t probeAddOne(int64_t x) { return x + 1; }

constexpr const char* kProgram = R"mlir(
llvm.func @kiln_rt_probe(i64) -> i64
llvm.func @twice_plus_one(%x: i64) -> i64 {
  %0 = llvm.add %x, %x : i64
  %1 = llvm.call @kiln_rt_probe(%0) : (i64) -> i64
  llvm.return %1 : i64
}
llvm.func @scale(%p: !llvm.ptr, %n: i64, %s: f32) {
  %c0 = llvm.mlir.constant(0 : i64) : i64
  %c1 = llvm.mlir.constant(1 : i64) : i64
  llvm.br ^loop(%c0 : i64)
^loop(%i: i64):
  %done = llvm.icmp "sge" %i, %n : i64
  llvm.cond_br %done, ^exit, ^body
^body:
  %addr = llvm.getelementptr %p[%i] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  %v = llvm.load %addr : !llvm.ptr -> f32
  %w = llvm.fmul %v, %s : f32
  %quarter = llvm.mlir.constant(0.25 : f32) : f32
  %u = llvm.fadd %w, %quarter : f32
  llvm.store %u, %addr : f32, !llvm.ptr
  %next = llvm.add %i, %c1 : i64
  llvm.br ^loop(%next : i64)
^exit:
  llvm.return
}
)mlir";

class JitEngineTest : public ::testing::Test {
 protected:
  JitEngineTest() { context.loadDialect<mlir::LLVM::LLVMDialect>(); }

  std::string compile(const char* source, unsigned optLevel = 3) {
    mlir::OwningOpRef<mlir::ModuleOp> module =
        mlir::parseSourceString<mlir::ModuleOp>(source, &context);
    EXPECT_TRUE(module);
    return JitEngine::compileObject(*module, "test", SourceLoc::current(), nullptr, optLevel);
  }

  mlir::MLIRContext context;
  RuntimeSymbols symbols{{"kiln_rt_probe", reinterpret_cast<void*>(&probeAddOne)}};
};

TEST_F(JitEngineTest, CompiledCodeRunsAndCallsTheRuntime) {
  auto engine = JitEngine::link(compile(kProgram), symbols, "test", SourceLoc::current());
  auto twice = reinterpret_cast<int64_t (*)(int64_t)>(engine->lookup("twice_plus_one"));
  EXPECT_EQ(twice(20), 41);
  EXPECT_EQ(twice(-3), -5);

  std::vector<float> data(1000);
  for (size_t i = 0; i < data.size(); ++i) data[i] = float(i);
  auto scale = reinterpret_cast<void (*)(float*, int64_t, float)>(engine->lookup("scale"));
  scale(data.data(), int64_t(data.size()), 0.5f);
  for (size_t i = 0; i < data.size(); ++i) ASSERT_EQ(data[i], float(i) * 0.5f + 0.25f) << i;
}

TEST_F(JitEngineTest, TheSameModuleGivesTheSameObject) {
  // Disk cache entries are keyed by the module, so compiling must be deterministic.
  EXPECT_EQ(compile(kProgram), compile(kProgram));
}

// Every optimization level gives working code, the same bytes each time, and the level
// reaches LLVM: O0's object is not O3's.
TEST_F(JitEngineTest, EachOptimizationLevelGivesWorkingCode) {
  EXPECT_EQ(compile(kProgram, 0), compile(kProgram, 0));
  EXPECT_NE(compile(kProgram, 0), compile(kProgram, 3));
  for (unsigned level : {0u, 1u, 2u, 3u}) {
    auto engine = JitEngine::link(compile(kProgram, level), symbols, "test", SourceLoc::current());
    auto twice = reinterpret_cast<int64_t (*)(int64_t)>(engine->lookup("twice_plus_one"));
    EXPECT_EQ(twice(20), 41) << "O" << level;
  }
}

TEST_F(JitEngineTest, AnObjectLinksIntoSeveralEngines) {
  std::string object = compile(kProgram);
  auto a = JitEngine::link(object, symbols, "test", SourceLoc::current());
  auto b = JitEngine::link(object, symbols, "test", SourceLoc::current());
  EXPECT_NE(a->lookup("twice_plus_one"), b->lookup("twice_plus_one"));
}

// Compiled code reaches its constants and the runtime PC-relatively (small code model, PIC,
// as LLJIT picks for JITLink): a 64-bit relocation in the code (absolute or GOT-relative)
// means the large model, where every constant load first puts an address in a register, and fused kernels
// spill inside their loops.
TEST_F(JitEngineTest, CodeAddressesItsConstantsRelativeToThePc) {
  if (HostTarget::get().triple.rfind("x86_64", 0) != 0)
    GTEST_SKIP() << "SKIPPED: checks x86-64 relocations; this host is " << HostTarget::get().triple;
  std::string object = compile(kProgram);  // a vectorised loop with a constant, and a call
  auto file = llvm::object::ObjectFile::createObjectFile(
      llvm::MemoryBufferRef(llvm::StringRef(object.data(), object.size()), "kiln-object"));
  ASSERT_TRUE(bool(file)) << llvm::toString(file.takeError());
  int relocations = 0;
  for (const llvm::object::SectionRef& section : (*file)->sections()) {
    // ELF keeps a section's relocations in a section of their own (.rela.text).
    llvm::Expected<llvm::object::section_iterator> target = section.getRelocatedSection();
    ASSERT_TRUE(bool(target)) << llvm::toString(target.takeError());
    if (*target == (*file)->section_end() || !(*target)->isText()) continue;
    for (const llvm::object::RelocationRef& relocation : section.relocations()) {
      ++relocations;
      llvm::SmallString<32> name;
      relocation.getTypeName(name);
      const uint64_t type = relocation.getType();
      EXPECT_TRUE(type == llvm::ELF::R_X86_64_PC32 || type == llvm::ELF::R_X86_64_PLT32 ||
                  type == llvm::ELF::R_X86_64_GOTPCREL ||
                  type == llvm::ELF::R_X86_64_GOTPCRELX ||
                  type == llvm::ELF::R_X86_64_REX_GOTPCRELX)
          << "relocation " << name.str().str() << " in the code is not 32-bit PC-relative";
    }
  }
  EXPECT_GT(relocations, 0) << "the constants and the call went unrelocated";
}

// KILN_PERF_MAP names JIT code for `perf report`: each linked function's address, size
// and name in /tmp/perf-<pid>.map.
TEST_F(JitEngineTest, ThePerfMapNamesEachCompiledFunction) {
  const std::string path = "/tmp/perf-" + std::to_string(getpid()) + ".map";
  std::remove(path.c_str());
  ASSERT_EQ(setenv("KILN_PERF_MAP", "1", 1), 0);
  ASSERT_TRUE(JitEngine::perfMapEnabled());
  auto engine = JitEngine::link(compile(kProgram), symbols, "test", SourceLoc::current());
  ASSERT_EQ(unsetenv("KILN_PERF_MAP"), 0);
  EXPECT_FALSE(JitEngine::perfMapEnabled());
  std::ifstream map(path);
  ASSERT_TRUE(map) << path;
  std::map<std::string, std::pair<uint64_t, uint64_t>> functions;  // name -> address, size
  for (std::string line; std::getline(map, line);) {
    std::istringstream fields(line);
    uint64_t address = 0, size = 0;
    std::string name;
    ASSERT_TRUE(fields >> std::hex >> address >> size >> name) << line;
    functions[name] = {address, size};
  }
  std::remove(path.c_str());
  for (const char* name : {"twice_plus_one", "scale"}) {
    ASSERT_TRUE(functions.count(name)) << name << " is not in the map";
    EXPECT_EQ(functions[name].first, reinterpret_cast<uint64_t>(engine->lookup(name))) << name;
    EXPECT_GT(functions[name].second, 0u) << name;
  }
  EXPECT_FALSE(functions.count("kiln_rt_probe")) << "the runtime's symbols are not compiled code";
}

// An object's static initializers (.init_array: C++ globals built at run time, functions
// marked constructor) run when it is linked, in priority order, before anything is looked
// up, as a dynamic loader runs them: Halide's CUDA runtime builds its compilation cache so,
// and without it every HALIDE kernel launch on a GPU aborted in halide_cuda_run (the cache
// had filed the loaded module under id 0, which reads as an empty slot).
TEST_F(JitEngineTest, StaticInitializersRunWhenAnObjectIsLinked) {
  constexpr const char* kInitialized = R"mlir(
llvm.mlir.global_ctors ctors = [@late, @early], priorities = [200 : i32, 100 : i32], data = [#llvm.zero, #llvm.zero]
llvm.mlir.global external @state(0 : i64) : i64
llvm.func @kiln_rt_probe(i64) -> i64
llvm.func @early() {
  %p = llvm.mlir.addressof @state : !llvm.ptr
  %six = llvm.mlir.constant(6 : i64) : i64
  %c = llvm.call @kiln_rt_probe(%six) : (i64) -> i64
  llvm.store %c, %p : i64, !llvm.ptr
  llvm.return
}
llvm.func @late() {
  %p = llvm.mlir.addressof @state : !llvm.ptr
  %v = llvm.load %p : !llvm.ptr -> i64
  %c = llvm.mlir.constant(10 : i64) : i64
  %m = llvm.mul %v, %c : i64
  llvm.store %m, %p : i64, !llvm.ptr
  llvm.return
}
llvm.func @read() -> i64 {
  %p = llvm.mlir.addressof @state : !llvm.ptr
  %v = llvm.load %p : !llvm.ptr -> i64
  llvm.return %v : i64
}
)mlir";
  // The initializers call into the process, so LLVM cannot run them at compile time (its
  // global optimizer folds initializers it can evaluate into the globals' values).
  for (unsigned level : {0u, 3u}) {
    const std::string object = compile(kInitialized, level);
    for (int engine = 0; engine < 2; ++engine) {  // each engine its own state, initialized once
      auto linked = JitEngine::link(object, symbols, "test", SourceLoc::current());
      auto read = reinterpret_cast<int64_t (*)()>(linked->lookup("read"));
      EXPECT_EQ(read(), 70) << "O" << level << ": early (priority 100) sets 6 + 1, then late (200) multiplies by 10";
      EXPECT_EQ(read(), 70);
    }
  }
}

TEST_F(JitEngineTest, AMissingFunctionIsACompileError) {
  auto engine = JitEngine::link(compile(kProgram), symbols, "trace", SourceLoc::current());
  try {
    engine->lookup("no_such_kernel");
    FAIL() << "lookup of a missing function succeeded";
  } catch (const CompileError& e) {
    EXPECT_NE(std::string(e.what()).find("no function 'no_such_kernel'"), std::string::npos)
        << e.what();
    EXPECT_EQ(e.op(), "trace");
  }
}

TEST_F(JitEngineTest, AnUnresolvedRuntimeSymbolIsACompileError) {
  auto engine = JitEngine::link(compile(kProgram), {}, "trace", SourceLoc::current());
  EXPECT_THROW(engine->lookup("twice_plus_one"), CompileError);
}

TEST_F(JitEngineTest, AGarbageObjectIsACompileError) {
  EXPECT_THROW(JitEngine::link("not an object file", symbols, "load", SourceLoc::current()),
               CompileError);
}

TEST_F(JitEngineTest, ANonLlvmModuleIsACompileError) {
  context.allowUnregisteredDialects();
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::parseSourceString<mlir::ModuleOp>(
      R"mlir("test.op"() : () -> ())mlir", &context);
  ASSERT_TRUE(module);
  EXPECT_THROW(JitEngine::compileObject(*module, "test", SourceLoc::current()), CompileError);
}

TEST(HostTargetTest, NamesThisMachine) {
  const HostTarget& host = HostTarget::get();
  EXPECT_FALSE(host.triple.empty());
  EXPECT_FALSE(host.cpu.empty());
  EXPECT_NE(host.key().find(host.triple), std::string::npos);
}

// An LLVM-dialect module of `n` exported functions f<i>(x) = 3x + i, all calling one
// private helper (so functions in different parts share it).
std::string manyFunctions(int n) {
  std::string source = R"mlir(
llvm.func internal @helper(%x: i64) -> i64 {
  %c3 = llvm.mlir.constant(3 : i64) : i64
  %0 = llvm.mul %x, %c3 : i64
  llvm.return %0 : i64
}
)mlir";
  for (int i = 0; i < n; ++i)
    source += "llvm.func @f" + std::to_string(i) + R"mlir((%x: i64) -> i64 {
  %c = llvm.mlir.constant()mlir" + std::to_string(i) + R"mlir( : i64) : i64
  %0 = llvm.call @helper(%x) : (i64) -> i64
  %1 = llvm.add %0, %c : i64
  llvm.return %1 : i64
}
)mlir";
  return source;
}

// The number of objects in a compiled blob: JitEngine packs several as "KILNOBJS" and a
// little-endian u64 count; one object is stored as itself.
uint64_t objectCount(const std::string& blob) {
  if (blob.compare(0, 8, "KILNOBJS") != 0) return 1;
  uint64_t count = 0;
  for (int i = 0; i < 8; ++i) count |= uint64_t(uint8_t(blob[size_t(8 + i)])) << (8 * i);
  return count;
}

// The threads JitEngine compiles a split module on.
unsigned compileThreads() { return std::max(1u, std::min(4u, std::thread::hardware_concurrency())); }

// A module of many functions is compiled in parts on several threads (a private helper
// shared by functions that may land in different parts included); the parts link into one
// engine, and compiling stays deterministic. 40 functions: a part a thread.
TEST_F(JitEngineTest, LargeModulesCompileInPartsAndLinkAsOne) {
  const std::string source = manyFunctions(40);
  std::string object = compile(source.c_str());
  EXPECT_EQ(object, compile(source.c_str()));
  if (compileThreads() > 1) {
    EXPECT_EQ(object.substr(0, 8), "KILNOBJS") << "compiled in one piece";
    EXPECT_EQ(objectCount(object), compileThreads());
  }
  auto engine = JitEngine::link(object, symbols, "test", SourceLoc::current());
  for (int i = 0; i < 40; ++i) {
    auto f = reinterpret_cast<int64_t (*)(int64_t)>(engine->lookup("f" + std::to_string(i)));
    EXPECT_EQ(f(5), 15 + i) << i;
  }
}

// A module big enough for 16 functions a part at 4 parts a thread is split that finely,
// and the threads take the parts from a queue (parts of equal IR size take unequal times);
// the objects come back in the parts' order, so the blob is still deterministic.
TEST_F(JitEngineTest, VeryLargeModulesCompileInFourPartsAThreadFromAQueue) {
  if (compileThreads() < 2) GTEST_SKIP() << "SKIPPED: one hardware thread: nothing is split";
  const int n = 4 * 4 * 16 + 8;  // enough for 4 threads too
  const std::string source = manyFunctions(n);
  std::string object = compile(source.c_str());
  EXPECT_EQ(object, compile(source.c_str()));
  EXPECT_EQ(objectCount(object), 4 * compileThreads());
  auto engine = JitEngine::link(object, symbols, "test", SourceLoc::current());
  for (int i = 0; i < n; ++i) {
    auto f = reinterpret_cast<int64_t (*)(int64_t)>(engine->lookup("f" + std::to_string(i)));
    EXPECT_EQ(f(7), 21 + i) << i;
  }
}

// On a host with AVX-512 every function asks LLVM for 512-bit vectors (its Intel server
// tuning would pick 256), as the eager kernels' AVX-512 clones use; elsewhere nothing is
// asked. The values are the same either way (the program runs).
TEST_F(JitEngineTest, FunctionsPreferFullWidthVectorsOnAnAvx512Host) {
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::parseSourceString<mlir::ModuleOp>(kProgram, &context);
  ASSERT_TRUE(module);
  std::string ir;
  std::string object = JitEngine::compileObject(*module, "test", SourceLoc::current(), &ir, 3);
  const std::string& features = HostTarget::get().features;
  const bool avx512 = ("," + features + ",").find(",+avx512f,") != std::string::npos;
  EXPECT_EQ(ir.find("\"prefer-vector-width\"=\"512\"") != std::string::npos, avx512) << features << "\n" << ir;
  auto engine = JitEngine::link(object, symbols, "test", SourceLoc::current());
  float values[3] = {1, 2, 3};
  reinterpret_cast<void (*)(float*, int64_t, float)>(engine->lookup("scale"))(values, 3, 2.0f);
  EXPECT_EQ(values[2], 6.25f);
}

// Two kernels with the same body (as lowering can make of fusions kiln-outline-kernels kept
// apart) are optimized and code-generated once: the second calls the first. Both run.
TEST_F(JitEngineTest, IdenticalFunctionsAreCompiledOnce) {
  std::string source = kProgram;
  const std::string scale = source.substr(source.find("llvm.func @scale("));
  source += "\n" + std::regex_replace(scale, std::regex("@scale\\("), "@scale_again(");
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::parseSourceString<mlir::ModuleOp>(source, &context);
  ASSERT_TRUE(module);
  std::string ir;
  std::string object = JitEngine::compileObject(*module, "test", SourceLoc::current(), &ir, 3);
  const size_t again = ir.find("@scale_again(");
  ASSERT_NE(again, std::string::npos) << ir;
  const std::string body = ir.substr(again, ir.find("\n}", again) - again);
  EXPECT_NE(body.find("call void @scale("), std::string::npos) << body;
  EXPECT_EQ(body.find("fmul"), std::string::npos) << body;
  auto engine = JitEngine::link(object, symbols, "test", SourceLoc::current());
  for (const char* name : {"scale", "scale_again"}) {
    float values[3] = {1, 2, 3};
    reinterpret_cast<void (*)(float*, int64_t, float)>(engine->lookup(name))(values, 3, 2.0f);
    EXPECT_EQ(values[2], 6.25f) << name;
  }
}

// Small kernels (kiln_codegen.max_elements at most the threshold) and the private chunk
// functions only they use are compiled optnone; a larger kernel, and a private function a
// larger kernel also uses, keep LLVM's optimizations. All of them compute the same.
constexpr const char* kSizedKernels = R"mlir(
llvm.func internal @small_chunk(%x: i64) -> i64 {
  %0 = llvm.add %x, %x : i64
  llvm.return %0 : i64
}
llvm.func internal @shared(%x: i64) -> i64 {
  %0 = llvm.mul %x, %x : i64
  llvm.return %0 : i64
}
llvm.func @small(%x: i64) -> i64 attributes {kiln_codegen.max_elements = 16 : i64} {
  %0 = llvm.call @small_chunk(%x) : (i64) -> i64
  %1 = llvm.call @shared(%0) : (i64) -> i64
  llvm.return %1 : i64
}
llvm.func @large(%x: i64) -> i64 attributes {kiln_codegen.max_elements = 1048576 : i64} {
  %0 = llvm.call @shared(%x) : (i64) -> i64
  %c1 = llvm.mlir.constant(1 : i64) : i64
  %1 = llvm.add %0, %c1 : i64
  llvm.return %1 : i64
}
)mlir";

// Whether the LLVM IR `ir` defines @name with the optnone attribute (false where it has
// no @name: the optimizer inlined it).
bool isOptnone(const std::string& ir, const std::string& name) {
  const size_t define = ir.find("@" + name + "(");
  if (define == std::string::npos) return false;
  const size_t lineEnd = ir.find('\n', define);
  const std::string line = ir.substr(define, lineEnd - define);
  const size_t hash = line.rfind('#');
  if (hash == std::string::npos) return false;
  const std::string group = line.substr(hash, line.find(' ', hash) - hash);
  const size_t attributes = ir.find("attributes " + group + " = {");
  EXPECT_NE(attributes, std::string::npos) << group;
  return ir.substr(attributes, ir.find('\n', attributes) - attributes).find("optnone") !=
         std::string::npos;
}

TEST_F(JitEngineTest, SmallKernelsCompileWithoutOptimization) {
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(kSizedKernels, &context);
  ASSERT_TRUE(module);
  std::string ir;
  std::string object = JitEngine::compileObject(*module, "test", SourceLoc::current(), &ir, 2,
                                                /*quickElements=*/16);
  EXPECT_TRUE(isOptnone(ir, "small"));
  EXPECT_TRUE(isOptnone(ir, "small_chunk")) << "a chunk only the small kernel uses";
  EXPECT_FALSE(isOptnone(ir, "large"));
  EXPECT_FALSE(isOptnone(ir, "shared")) << "a function the large kernel uses too";
  auto engine = JitEngine::link(object, symbols, "test", SourceLoc::current());
  EXPECT_EQ(reinterpret_cast<int64_t (*)(int64_t)>(engine->lookup("small"))(3), 36);
  EXPECT_EQ(reinterpret_cast<int64_t (*)(int64_t)>(engine->lookup("large"))(3), 10);

  std::string below;
  JitEngine::compileObject(*module, "test", SourceLoc::current(), &below, 2, /*quickElements=*/15);
  EXPECT_FALSE(isOptnone(below, "small")) << "16 elements, over a threshold of 15";
  EXPECT_FALSE(isOptnone(below, "small_chunk")) << "inlined, or at least optimized";
}

// KILN_O0_ELEMENTS sets the threshold; anything but a count is a CompileError naming it.
// The host function calls each kernel; LLVM's inliner must not copy a kernel into it, or
// the kernel, which stays exported, is optimized and code-generated twice.
constexpr const char* kHostAndKernel = R"mlir(
llvm.func @main_kernel_0(%x: i64) -> i64 attributes {kiln_codegen.max_elements = 1048576 : i64} {
  %c3 = llvm.mlir.constant(3 : i64) : i64
  %0 = llvm.mul %x, %c3 : i64
  llvm.return %0 : i64
}
llvm.func @kiln_main(%x: i64) -> i64 {
  %0 = llvm.call @main_kernel_0(%x) : (i64) -> i64
  %1 = llvm.call @main_kernel_0(%0) : (i64) -> i64
  llvm.return %1 : i64
}
)mlir";

TEST_F(JitEngineTest, KernelsAreNotInlinedIntoTheHost) {
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(kHostAndKernel, &context);
  ASSERT_TRUE(module);
  for (unsigned level : {2u, 3u}) {
    std::string ir;
    std::string object =
        JitEngine::compileObject(*module, "test", SourceLoc::current(), &ir, level, 0);
    const size_t host = ir.find("@kiln_main(");
    ASSERT_NE(host, std::string::npos) << ir;
    const std::string body = ir.substr(host, ir.find("\n}", host) - host);
    EXPECT_NE(body.find("call i64 @main_kernel_0("), std::string::npos) << "O" << level << ":\n" << body;
    auto engine = JitEngine::link(object, symbols, "test", SourceLoc::current());
    EXPECT_EQ(reinterpret_cast<int64_t (*)(int64_t)>(engine->lookup("kiln_main"))(2), 18);
  }
}

TEST(QuickKernelElementsTest, ReadsKilnO0Elements) {
  ASSERT_EQ(setenv("KILN_O0_ELEMENTS", "123", 1), 0);
  EXPECT_EQ(quickKernelElements("test", SourceLoc::current()), 123);
  ASSERT_EQ(setenv("KILN_O0_ELEMENTS", "0", 1), 0);
  EXPECT_EQ(quickKernelElements("test", SourceLoc::current()), 0);
  for (const char* bad : {"many", "-5", "12k"}) {
    ASSERT_EQ(setenv("KILN_O0_ELEMENTS", bad, 1), 0);
    try {
      quickKernelElements("trace", SourceLoc::current());
      ADD_FAILURE() << bad << " was accepted";
    } catch (const CompileError& e) {
      EXPECT_NE(std::string(e.what()).find("KILN_O0_ELEMENTS is '" + std::string(bad) + "'"),
                std::string::npos)
          << e.what();
    }
  }
  ASSERT_EQ(unsetenv("KILN_O0_ELEMENTS"), 0);
  EXPECT_GT(quickKernelElements("test", SourceLoc::current()), 0) << "on by default";
}

}  // namespace
}  // namespace kiln::runtime

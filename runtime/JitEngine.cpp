// JitEngine (see JitEngine.h): translation to LLVM IR, O3, object emission, ORC linking.
#include "runtime/JitEngine.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ExecutionEngine/Orc/AbsoluteSymbols.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/JITLink/JITLink.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/ExecutionEngine/Orc/ObjectLinkingLayer.h"
#include "llvm/Object/ObjectFile.h"
#include "llvm/Object/SymbolSize.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassInstrumentation.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/StandardInstrumentations.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/Transforms/IPO/MergeFunctions.h"
#include "llvm/Transforms/Utils/SplitModule.h"
#include "runtime/CompileThreads.h"

namespace kiln::runtime {
namespace {

void initializeNativeTarget() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
}

std::string message(llvm::Error error) { return llvm::toString(std::move(error)); }

llvm::orc::JITTargetMachineBuilder hostMachineBuilder(std::string_view op, const SourceLoc& loc,
                                                      unsigned optLevel = 3) {
  initializeNativeTarget();
  auto builder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!builder)
    throw CompileError::make(loc, op, "cannot describe the host CPU to LLVM: ",
                             message(builder.takeError()));
  builder->setCodeGenOptLevel(llvm::CodeGenOpt::getLevel(int(std::min(optLevel, 3u)))
                                  .value_or(llvm::CodeGenOptLevel::Aggressive));
  // What LLJIT itself picks when it links with JITLink: position-independent code in the
  // small code model. Left unset, a JIT target machine on x86-64 uses the large model, whose
  // every constant load first materialises a 64-bit address in a register; in a fused
  // kernel that crowds the registers and spills to the stack inside the loop (the GELU
  // chain's loop: 57 instead of 48 cycles per 32 elements, llvm-mca on Zen 4).
  builder->setRelocationModel(llvm::Reloc::PIC_);
  builder->setCodeModel(llvm::CodeModel::Small);
  return std::move(*builder);
}

}  // namespace

const HostTarget& HostTarget::get() {
  static const HostTarget host = [] {
    llvm::orc::JITTargetMachineBuilder builder =
        hostMachineBuilder("host target", std::source_location::current());
    return HostTarget{builder.getTargetTriple().str(), builder.getCPU(),
                      builder.getFeatures().getString()};
  }();
  return host;
}

std::string HostTarget::key() const { return triple + "|" + cpu + "|" + features; }

namespace {

// A module with at least this many function bodies is split and its parts compiled on
// several threads: LLVM's O3 and code generation are most of a large program's compile
// time (449 kernels of a mobilenet_v2 step: 9.5 s of 10.1 s), and kernels are
// independent. Smaller modules are not worth the bitcode round trip.
constexpr size_t kSplitFunctions = 16;
// Parts per thread of a split module, taken from a queue: SplitModule balances the parts'
// IR sizes, not their compile times (two parts of the mobilenet_v2 step took CPU times
// 8-18% apart), so finer parts let the threads finish together. Each part has a fixed
// cost (a target machine, a pass pipeline, an object), so not one per function.
constexpr unsigned kPartsPerThread = 4;
// ...where that gives each part at least this many function bodies; else a part a thread.
constexpr size_t kFunctionsPerPart = 16;

// Several objects in one blob: "KILNOBJS", a count, then each object's size and bytes
// (little-endian u64s). One object is stored as itself.
constexpr char kPackMagic[8] = {'K', 'I', 'L', 'N', 'O', 'B', 'J', 'S'};

void appendU64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(char((v >> (8 * i)) & 0xff));
}

uint64_t readU64(std::string_view in, size_t at) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= uint64_t(uint8_t(in[at + size_t(i)])) << (8 * i);
  return v;
}

std::string pack(const std::vector<std::string>& objects) {
  if (objects.size() == 1) return objects.front();
  std::string out(kPackMagic, sizeof kPackMagic);
  appendU64(out, objects.size());
  for (const std::string& object : objects) {
    appendU64(out, object.size());
    out += object;
  }
  return out;
}

// The objects of a blob from pack(); nullopt if it is truncated.
std::optional<std::vector<std::string_view>> unpack(std::string_view blob) {
  if (blob.size() < sizeof kPackMagic || std::memcmp(blob.data(), kPackMagic, sizeof kPackMagic))
    return std::vector<std::string_view>{blob};
  std::vector<std::string_view> objects;
  size_t at = sizeof kPackMagic;
  if (blob.size() < at + 8) return std::nullopt;
  uint64_t count = readU64(blob, at);
  at += 8;
  for (uint64_t i = 0; i < count; ++i) {
    if (blob.size() < at + 8) return std::nullopt;
    uint64_t size = readU64(blob, at);
    at += 8;
    if (blob.size() - at < size) return std::nullopt;
    objects.push_back(blob.substr(at, size));
    at += size;
  }
  return objects;
}

// LLVM's default pipeline at `optLevel` (0-3) on `ir`, as MLIR's
// makeOptimizingTransformer builds it, but with the instrumentation that makes passes skip
// `optnone` functions (markOptnone), which that helper does not register.
void runPassPipeline(llvm::Module& ir, unsigned optLevel, llvm::TargetMachine* machine) {
  const llvm::OptimizationLevel level[] = {llvm::OptimizationLevel::O0, llvm::OptimizationLevel::O1,
                                           llvm::OptimizationLevel::O2, llvm::OptimizationLevel::O3};
  llvm::PassInstrumentationCallbacks instrumentation;
  llvm::OptNoneInstrumentation optnone(/*DebugLogging=*/false);
  optnone.registerCallbacks(instrumentation);
  llvm::PipelineTuningOptions tuning;
  tuning.LoopUnrolling = true;
  tuning.LoopInterleaving = true;
  tuning.LoopVectorization = true;
  tuning.SLPVectorization = true;
  llvm::PassBuilder builder(machine, tuning, std::nullopt, &instrumentation);
  llvm::LoopAnalysisManager loops;
  llvm::FunctionAnalysisManager functions;
  llvm::CGSCCAnalysisManager sccs;
  llvm::ModuleAnalysisManager modules;
  builder.registerModuleAnalyses(modules);
  builder.registerCGSCCAnalyses(sccs);
  builder.registerFunctionAnalyses(functions);
  builder.registerLoopAnalyses(loops);
  builder.crossRegisterProxies(loops, functions, sccs, modules);
  const llvm::OptimizationLevel chosen = level[std::min(optLevel, 3u)];
  llvm::ModulePassManager pipeline = chosen == llvm::OptimizationLevel::O0
                                         ? builder.buildO0DefaultPipeline(chosen)
                                         : builder.buildPerModuleDefaultPipeline(chosen);
  pipeline.run(ir, modules);
}

// O3 for the host and an object file, for `ir`; `optimizedIR`, if not null, gets the IR
// after O3. Owns nothing shared, so parts of a split module run this on their own threads.
std::string optimizeAndEmit(llvm::Module& ir, std::string_view op, const SourceLoc& loc,
                            std::string* optimizedIR, unsigned optLevel) {
  auto machine = hostMachineBuilder(op, loc, optLevel).createTargetMachine();
  if (!machine)
    throw CompileError::make(loc, op, "no LLVM target machine for the host: ",
                             message(machine.takeError()));
  ir.setDataLayout((*machine)->createDataLayout());
  ir.setTargetTriple((*machine)->getTargetTriple());
  runPassPipeline(ir, optLevel, machine->get());
  if (optimizedIR) {
    llvm::raw_string_ostream out(*optimizedIR);
    ir.print(out, nullptr);
  }
  llvm::SmallVector<char, 0> object;
  llvm::raw_svector_ostream stream(object);
  llvm::legacy::PassManager emit;
  if ((*machine)->addPassesToEmitFile(emit, stream, nullptr, llvm::CodeGenFileType::ObjectFile))
    throw CompileError::make(loc, op, "the host target cannot emit object files");
  emit.run(ir);
  return std::string(object.begin(), object.end());
}

// Splits `ir` into `parts` modules and compiles them on `threads` threads, which take the
// parts from a queue, each part in an LLVMContext of its own (a context is not
// thread-safe): the parts travel as bitcode.
std::vector<std::string> compileInParts(llvm::Module& ir, unsigned parts, unsigned threadCount,
                                        std::string_view op, const SourceLoc& loc,
                                        std::string* optimizedIR, unsigned optLevel) {
  std::vector<std::string> bitcode;
  llvm::SplitModule(ir, parts, [&](std::unique_ptr<llvm::Module> part) {
    std::string bytes;
    llvm::raw_string_ostream out(bytes);
    llvm::WriteBitcodeToFile(*part, out);
    out.flush();
    bitcode.push_back(std::move(bytes));
  });
  std::vector<std::string> objects(bitcode.size()), texts(bitcode.size());
  forEachOnThreads(bitcode.size(), threadCount, [&](size_t i) {
    llvm::LLVMContext context;
    auto part = llvm::parseBitcodeFile(llvm::MemoryBufferRef(bitcode[i], "kiln-part"), context);
    if (!part)
      throw CompileError::make(loc, op, "reading back a split part failed: ", message(part.takeError()));
    objects[i] = optimizeAndEmit(**part, op, loc, optimizedIR ? &texts[i] : nullptr, optLevel);
  });
  if (optimizedIR)
    for (size_t i = 0; i < texts.size(); ++i)
      *optimizedIR += "; ---- part " + std::to_string(i) + " of " +
                      std::to_string(texts.size()) + "\n" + texts[i];
  return objects;
}

// The names of the functions of `module` with JitEngine::kMaxElementsAttr at most
// `quickElements`.
std::vector<std::string> quickFunctions(mlir::ModuleOp module, int64_t quickElements) {
  std::vector<std::string> names;
  if (quickElements <= 0) return names;
  const llvm::StringRef attr(JitEngine::kMaxElementsAttr.data(), JitEngine::kMaxElementsAttr.size());
  module.walk([&](mlir::Operation* op) {
    auto elements = op->getAttrOfType<mlir::IntegerAttr>(attr);
    auto name = op->getAttrOfType<mlir::StringAttr>(mlir::SymbolTable::getSymbolAttrName());
    if (elements && name && elements.getInt() <= quickElements) names.push_back(name.str());
  });
  return names;
}

// Whether every use of `value` (through constant expressions) is an instruction of a
// function in `optnone`.
bool usedOnlyBy(const llvm::Value& value, const llvm::DenseSet<const llvm::Function*>& optnone) {
  for (const llvm::User* user : value.users()) {
    if (auto* instruction = llvm::dyn_cast<llvm::Instruction>(user)) {
      if (!optnone.contains(instruction->getFunction())) return false;
    } else if (!llvm::isa<llvm::Constant>(user) || !usedOnlyBy(*user, optnone)) {
      return false;
    }
  }
  return true;
}

// Marks `names` optnone (with noinline, which LLVM requires beside it), then every
// private function whose only users they are, until none is left: kiln-parallelize
// outlines a kernel's loops into such chunk functions, where the kernel's work is.
// LLVM's pass pipeline skips optnone functions and code generation takes FastISel for
// them (KILN_LLVM_OPT=0, all of it so, took 0.07x the LLVM time of O2 on the CNN step).
void markOptnone(llvm::Module& ir, const std::vector<std::string>& names) {
  llvm::DenseSet<const llvm::Function*> optnone;
  auto mark = [&](llvm::Function& f) {
    f.removeFnAttr(llvm::Attribute::AlwaysInline);
    f.addFnAttr(llvm::Attribute::OptimizeNone);
    f.addFnAttr(llvm::Attribute::NoInline);
    optnone.insert(&f);
  };
  for (const std::string& name : names)
    if (llvm::Function* f = ir.getFunction(name); f && !f->isDeclaration()) mark(*f);
  for (bool changed = !optnone.empty(); changed;) {
    changed = false;
    for (llvm::Function& f : ir)
      if (!f.isDeclaration() && f.hasLocalLinkage() && !optnone.contains(&f) && !f.use_empty() &&
          usedOnlyBy(f, optnone)) {
        mark(f);
        changed = true;
      }
  }
}

// Marks every exported function body `noinline`: the kernels, which the host function
// calls once each. LLVM's inliner otherwise copies the small ones into the host function
// (73 of the mobilenet_v2 step's kernels, growing it from 5,447 to 21,928 lines of IR)
// while keeping their own bodies, as they are exported: the same loops optimized and
// code-generated twice, in one function whose instruction selection and scheduling cost
// more than linearly. A call of a kernel from the host costs nanoseconds.
void keepKernelsApart(llvm::Module& ir) {
  for (llvm::Function& f : ir)
    if (!f.isDeclaration() && !f.hasLocalLinkage() &&
        !f.hasFnAttribute(llvm::Attribute::AlwaysInline))
      f.addFnAttr(llvm::Attribute::NoInline);
}

// Whether the host has AVX-512 (LLVM's "+avx512f" among its features).
bool hostHasAvx512() {
  llvm::SmallVector<llvm::StringRef> features;
  llvm::StringRef(HostTarget::get().features).split(features, ',');
  return llvm::is_contained(features, "+avx512f");
}

// On an AVX-512 host, vectors of 512 bits. LLVM's tuning for Intel's AVX-512 server cores
// (skylake-avx512 to emeraldrapids) prefers 256-bit vectors, as their first generations
// slowed their clocks for 512-bit ones; its Zen 4/5 tuning does not. The eager kernels'
// AVX-512 clones (KILN_VECTOR_CLONES, GCC's x86-64-v4) use 512 bits, so on an Emerald
// Rapids guest the compiled softmax ran at 0.64-0.80x eager's speed: with 512-bit vectors
// the compiled gelu chain 1M took 0.71-0.73x the time, the mixed chain 0.77x and softmax
// 0.78x (docs/BENCHMARKS.md, 2026-11-29). Values do not change: the same IEEE operations
// on wider vectors (the kernels' sums are fixed-order lane trees, not LLVM reassociation).
void preferFullWidthVectors(llvm::Module& ir) {
  static const bool avx512 = hostHasAvx512();
  if (!avx512) return;
  for (llvm::Function& f : ir)
    if (!f.isDeclaration()) f.addFnAttr("prefer-vector-width", "512");
}

}  // namespace

std::string JitEngine::compileObject(mlir::ModuleOp module, std::string_view op,
                                     const SourceLoc& loc, std::string* optimizedIR,
                                     unsigned optLevel, int64_t quickElements) {
  if (quickElements < 0) quickElements = quickKernelElements(op, loc);
  const std::vector<std::string> quick = quickFunctions(module, quickElements);
  mlir::DialectRegistry registry;
  mlir::registerBuiltinDialectTranslation(registry);
  mlir::registerLLVMDialectTranslation(registry);
  module->getContext()->appendDialectRegistry(registry);

  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> ir = mlir::translateModuleToLLVMIR(module, context, "kiln");
  if (!ir)
    throw CompileError::make(loc, op, "translating the lowered module to LLVM IR failed "
                             "(it must hold LLVM dialect ops only)");
  markOptnone(*ir, quick);
  keepKernelsApart(*ir);
  preferFullWidthVectors(*ir);
  // Kernels that kiln-outline-kernels kept apart can still lower to the same LLVM IR
  // (they differ in something lowering drops); each then becomes a call of the first, so
  // it is optimized and code-generated once. MobileNetV2's step: LLVM 0.95-0.98 of the
  // time without it.
  llvm::MergeFunctionsPass::runOnModule(*ir);
  size_t bodies = 0;
  for (const llvm::Function& f : *ir) bodies += !f.isDeclaration();
  const unsigned threads = compileThreads(4);
  if (threads > 1 && bodies >= kSplitFunctions) {
    // A multiple of the threads, so none is left with one part more than the others.
    const unsigned parts =
        bodies >= size_t(threads) * kPartsPerThread * kFunctionsPerPart ? threads * kPartsPerThread : threads;
    return pack(compileInParts(*ir, parts, threads, op, loc, optimizedIR, optLevel));
  }
  return optimizeAndEmit(*ir, op, loc, optimizedIR, optLevel);
}

namespace {

// `object`'s bytes read as an object file.
llvm::Expected<std::unique_ptr<llvm::object::ObjectFile>> objectFile(std::string_view object) {
  return llvm::object::ObjectFile::createObjectFile(
      llvm::MemoryBufferRef(llvm::StringRef(object.data(), object.size()), "kiln-object"));
}

// The priority of an ELF initializer section: ".init_array.N" is N, ".init_array" and
// ".ctors" the default, 65535, as the dynamic loader and linkers order them (".ctors" runs
// its entries last to first). Other sections: nullopt.
std::optional<unsigned> initializerPriority(llvm::StringRef section) {
  if (section == ".init_array" || section == ".ctors") return 65535u;
  unsigned priority = 0;
  if (section.consume_front(".init_array.") && !section.getAsInteger(10, priority)) return priority;
  return std::nullopt;
}

// Every exported symbol `object` (one object file) defines, where it has static
// initializers to run (a lookup of them all makes ORC link the whole object); else nullopt.
std::optional<std::vector<std::string>> symbolsToInitialize(std::string_view object) {
  auto file = objectFile(object);
  if (!file) {
    llvm::consumeError(file.takeError());
    return std::nullopt;
  }
  bool initializers = false;
  for (const llvm::object::SectionRef& section : (*file)->sections())
    if (std::optional<llvm::StringRef> name = llvm::expectedToOptional(section.getName()))
      initializers = initializers || initializerPriority(*name).has_value();
  if (!initializers) return std::nullopt;
  std::vector<std::string> names;
  for (const llvm::object::SymbolRef& symbol : (*file)->symbols()) {
    std::optional<uint32_t> flags = llvm::expectedToOptional(symbol.getFlags());
    std::optional<llvm::StringRef> name = llvm::expectedToOptional(symbol.getName());
    if (flags && name && !name->empty() && (*flags & llvm::object::SymbolRef::SF_Global) &&
        !(*flags & llvm::object::SymbolRef::SF_Undefined))
      names.push_back(name->str());
  }
  return names;
}

// Collects the addresses in the initializer sections of what the engine links (the
// functions a dynamic loader would call before main), read after JITLink fixed them up.
// LLJIT without ORC's runtime library runs no initializers of object files itself.
class InitializerCollector final : public llvm::orc::ObjectLinkingLayer::Plugin {
 public:
  void modifyPassConfig(llvm::orc::MaterializationResponsibility&, llvm::jitlink::LinkGraph&,
                        llvm::jitlink::PassConfiguration& config) override {
    // Nothing refers to an initializer section: a live symbol keeps it from being pruned.
    config.PrePrunePasses.push_back([](llvm::jitlink::LinkGraph& graph) {
      for (llvm::jitlink::Section& section : graph.sections())
        if (initializerPriority(section.getName()))
          for (llvm::jitlink::Block* block : section.blocks())
            graph.addAnonymousSymbol(*block, 0, block->getSize(), false, true);
      return llvm::Error::success();
    });
    config.PostFixupPasses.push_back([this](llvm::jitlink::LinkGraph& graph) {
      std::lock_guard lock(mutex_);
      for (llvm::jitlink::Section& section : graph.sections()) {
        std::optional<unsigned> priority = initializerPriority(section.getName());
        if (!priority) continue;
        std::vector<llvm::jitlink::Block*> blocks(section.blocks().begin(), section.blocks().end());
        std::sort(blocks.begin(), blocks.end(),
                  [](auto* a, auto* b) { return a->getAddress() < b->getAddress(); });
        std::vector<uint64_t> entries;
        for (llvm::jitlink::Block* block : blocks) {
          llvm::ArrayRef<char> bytes = block->getContent();
          for (size_t at = 0; at + sizeof(uint64_t) <= bytes.size(); at += sizeof(uint64_t)) {
            uint64_t address;
            std::memcpy(&address, bytes.data() + at, sizeof(address));
            entries.push_back(address);
          }
        }
        if (section.getName() == ".ctors") std::reverse(entries.begin(), entries.end());
        for (uint64_t address : entries)
          if (address != 0 && address != ~uint64_t(0)) pending_.push_back({*priority, address});
      }
      return llvm::Error::success();
    });
  }
  llvm::Error notifyFailed(llvm::orc::MaterializationResponsibility&) override { return llvm::Error::success(); }
  llvm::Error notifyRemovingResources(llvm::orc::JITDylib&, llvm::orc::ResourceKey) override {
    return llvm::Error::success();
  }
  void notifyTransferringResources(llvm::orc::JITDylib&, llvm::orc::ResourceKey, llvm::orc::ResourceKey) override {}

  // The initializers collected so far, lowest priority number first (stable within one),
  // forgotten here: each runs once.
  std::vector<uint64_t> take() {
    std::lock_guard lock(mutex_);
    std::stable_sort(pending_.begin(), pending_.end(), [](auto& a, auto& b) { return a.first < b.first; });
    std::vector<uint64_t> addresses;
    for (auto& [priority, address] : pending_) addresses.push_back(address);
    pending_.clear();
    return addresses;
  }

 private:
  std::mutex mutex_;
  std::vector<std::pair<unsigned, uint64_t>> pending_;
};

}  // namespace

std::unique_ptr<JitEngine> JitEngine::link(std::string_view object, const RuntimeSymbols& symbols,
                                           std::string_view op, const SourceLoc& loc) {
  auto jit = llvm::orc::LLJITBuilder()
                 .setJITTargetMachineBuilder(hostMachineBuilder(op, loc))
                 .create();
  if (!jit) throw CompileError::make(loc, op, "cannot start ORC LLJIT: ", message(jit.takeError()));
  llvm::orc::JITDylib& dylib = (*jit)->getMainJITDylib();

  llvm::orc::SymbolMap runtime;
  for (const auto& [name, address] : symbols)
    runtime[(*jit)->mangleAndIntern(name)] = llvm::orc::ExecutorSymbolDef(
        llvm::orc::ExecutorAddr::fromPtr(address),
        llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable);
  if (llvm::Error error = dylib.define(llvm::orc::absoluteSymbols(std::move(runtime))))
    throw CompileError::make(loc, op, "cannot define the runtime's symbols: ", message(std::move(error)));
  auto process = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
      (*jit)->getDataLayout().getGlobalPrefix());
  if (!process)
    throw CompileError::make(loc, op, "cannot search the process for symbols: ",
                             message(process.takeError()));
  dylib.addGenerator(std::move(*process));

  std::optional<std::vector<std::string_view>> objects = unpack(object);
  if (!objects) throw CompileError::make(loc, op, "the compiled objects are truncated");
  // Objects with static initializers (Halide's runtime: C++ globals built at run time) have
  // them run here, once, before anything is looked up, as a dynamic loader would; Kiln's
  // own compiled code has none, and links lazily as before.
  std::vector<std::string> toLink;
  bool initialized = false;
  for (std::string_view part : *objects)
    if (std::optional<std::vector<std::string>> names = symbolsToInitialize(part)) {
      initialized = true;
      toLink.insert(toLink.end(), names->begin(), names->end());
    }
  std::shared_ptr<InitializerCollector> initializers;
  if (initialized) {
    initializers = std::make_shared<InitializerCollector>();
    auto* layer = llvm::dyn_cast<llvm::orc::ObjectLinkingLayer>(&(*jit)->getObjLinkingLayer());
    if (!layer) throw CompileError::make(loc, op, "cannot run the object's static initializers: ORC does not link with JITLink");
    layer->addPlugin(initializers);
  }
  for (std::string_view part : *objects) {
    auto buffer = llvm::MemoryBuffer::getMemBufferCopy(llvm::StringRef(part.data(), part.size()),
                                                        "kiln-object");
    if (llvm::Error error = (*jit)->addObjectFile(std::move(buffer)))
      throw CompileError::make(loc, op, "cannot link the compiled object: ",
                               message(std::move(error)));
  }
  if (initializers) {
    llvm::orc::SymbolLookupSet everything;
    for (const std::string& name : toLink)
      everything.add((*jit)->mangleAndIntern(name), llvm::orc::SymbolLookupFlags::WeaklyReferencedSymbol);
    auto linked = (*jit)->getExecutionSession().lookup(llvm::orc::makeJITDylibSearchOrder(&dylib), std::move(everything));
    if (!linked) throw CompileError::make(loc, op, "cannot link the compiled object: ", message(linked.takeError()));
    for (uint64_t address : initializers->take())
      reinterpret_cast<void (*)()>(static_cast<uintptr_t>(address))();
  }
  auto engine = std::unique_ptr<JitEngine>(new JitEngine(std::move(*jit), std::string(op), loc));
  if (perfMapEnabled())
    for (std::string_view part : *objects) engine->appendToPerfMap(part);
  return engine;
}

std::vector<std::string> JitEngine::undefinedSymbols(std::string_view object, std::string_view op,
                                                    const SourceLoc& loc) {
  auto file = objectFile(object);
  if (!file)
    throw CompileError::make(loc, op, "not an object file: ", message(file.takeError()));
  std::vector<std::string> names;
  for (const llvm::object::SymbolRef& symbol : (*file)->symbols()) {
    std::optional<uint32_t> flags = llvm::expectedToOptional(symbol.getFlags());
    std::optional<llvm::StringRef> name = llvm::expectedToOptional(symbol.getName());
    if (flags && name && !name->empty() && (*flags & llvm::object::SymbolRef::SF_Undefined))
      names.push_back(name->str());
  }
  return names;
}

bool JitEngine::perfMapEnabled() {
  const char* value = std::getenv("KILN_PERF_MAP");
  return value && *value && std::string_view(value) != "0";
}

// One line per function, "<hex address> <hex size> <name>", written with one write() on
// an O_APPEND descriptor, so engines linking at once in several threads never interleave
// within a line. A diagnostic: failures are ignored.
void JitEngine::appendToPerfMap(std::string_view object) const {
  auto file = objectFile(object);
  if (!file) {
    llvm::consumeError(file.takeError());
    return;
  }
  std::string lines;
  for (const auto& [symbol, size] : llvm::object::computeSymbolSizes(**file)) {
    std::optional<llvm::object::SymbolRef::Type> type = llvm::expectedToOptional(symbol.getType());
    std::optional<llvm::StringRef> name = llvm::expectedToOptional(symbol.getName());
    std::optional<uint32_t> flags = llvm::expectedToOptional(symbol.getFlags());
    if (!type || !name || !flags || *type != llvm::object::SymbolRef::ST_Function ||
        (*flags & llvm::object::SymbolRef::SF_Undefined))
      continue;
    auto address = llvm::expectedToOptional(jit_->lookup(*name));
    if (!address) continue;  // a local function: not visible to lookup
    char line[64];
    std::snprintf(line, sizeof line, "%llx %llx ", (unsigned long long)address->getValue(),
                  (unsigned long long)size);
    lines += line;
    lines += name->str();
    lines += '\n';
  }
  const std::string path = "/tmp/perf-" + std::to_string(getpid()) + ".map";
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return;
  [[maybe_unused]] ssize_t written = ::write(fd, lines.data(), lines.size());
  ::close(fd);
}

JitEngine::JitEngine(std::unique_ptr<llvm::orc::LLJIT> jit, std::string op, SourceLoc loc)
    : jit_(std::move(jit)), op_(std::move(op)), loc_(loc) {}

JitEngine::~JitEngine() = default;

void* JitEngine::find(std::string_view name) const {
  auto address = jit_->lookup(llvm::StringRef(name.data(), name.size()));
  if (!address) {
    llvm::consumeError(address.takeError());
    return nullptr;
  }
  return address->toPtr<void*>();
}

void* JitEngine::lookup(std::string_view name) const {
  auto address = jit_->lookup(llvm::StringRef(name.data(), name.size()));
  if (!address)
    throw CompileError::make(loc_, op_, "the compiled program has no function '", name, "': ",
                             message(address.takeError()));
  return address->toPtr<void*>();
}

// LLVM's optimization level for kernels and host code: O2, because O3 measurably gained
// nothing on the traced training steps and cost 1.7x the compile time (bench/opt_levels;
// docs/ARCHITECTURE.md, "Kernels are compiled at O2").
constexpr unsigned kLlvmOptLevel = 2;

// KILN_LLVM_OPT=0..3, read at each compile, overrides kLlvmOptLevel: a knob for measuring
// what a level gains (bench/opt_levels), part of the key.
unsigned llvmOptLevel(std::string_view op, const SourceLoc& loc) {
  const std::string_view value = std::getenv("KILN_LLVM_OPT") ? std::getenv("KILN_LLVM_OPT") : "";
  if (value.empty()) return kLlvmOptLevel;
  if (value.size() == 1 && value[0] >= '0' && value[0] <= '3') return unsigned(value[0] - '0');
  throw CompileError::make(loc, op, "KILN_LLVM_OPT is '", value, "'; it takes 0, 1, 2 or 3");
}

// Kernels over at most this many elements compile optnone: see JitEngine.h and
// docs/ARCHITECTURE.md ("Small kernels are compiled without optimization").
constexpr int64_t kQuickKernelElements = 1024;

int64_t quickKernelElements(std::string_view op, const SourceLoc& loc) {
  const std::string_view value =
      std::getenv("KILN_O0_ELEMENTS") ? std::getenv("KILN_O0_ELEMENTS") : "";
  if (value.empty()) return kQuickKernelElements;
  int64_t elements = 0;
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), elements);
  if (error != std::errc() || end != value.data() + value.size() || elements < 0)
    throw CompileError::make(loc, op, "KILN_O0_ELEMENTS is '", value,
                             "'; it takes a count of elements (0 turns it off)");
  return elements;
}

}  // namespace kiln::runtime

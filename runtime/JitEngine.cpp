// JitEngine (see JitEngine.h): translation to LLVM IR, O3, object emission, ORC linking.
#include "runtime/JitEngine.h"

#include <mutex>

#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ExecutionEngine/Orc/AbsoluteSymbols.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"

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

llvm::orc::JITTargetMachineBuilder hostMachineBuilder(std::string_view op, const SourceLoc& loc) {
  initializeNativeTarget();
  auto builder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!builder)
    throw CompileError::make(loc, op, "cannot describe the host CPU to LLVM: ",
                             message(builder.takeError()));
  builder->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
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

std::string JitEngine::compileObject(mlir::ModuleOp module, std::string_view op,
                                     const SourceLoc& loc, std::string* optimizedIR) {
  mlir::DialectRegistry registry;
  mlir::registerBuiltinDialectTranslation(registry);
  mlir::registerLLVMDialectTranslation(registry);
  module->getContext()->appendDialectRegistry(registry);

  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> ir = mlir::translateModuleToLLVMIR(module, context, "kiln");
  if (!ir)
    throw CompileError::make(loc, op, "translating the lowered module to LLVM IR failed "
                             "(it must hold LLVM dialect ops only)");
  auto machine = hostMachineBuilder(op, loc).createTargetMachine();
  if (!machine)
    throw CompileError::make(loc, op, "no LLVM target machine for the host: ",
                             message(machine.takeError()));
  ir->setDataLayout((*machine)->createDataLayout());
  ir->setTargetTriple((*machine)->getTargetTriple());
  if (llvm::Error error = mlir::makeOptimizingTransformer(3, 0, machine->get())(ir.get()))
    throw CompileError::make(loc, op, "LLVM's O3 pipeline failed: ", message(std::move(error)));
  if (optimizedIR) {
    llvm::raw_string_ostream out(*optimizedIR);
    ir->print(out, nullptr);
  }

  llvm::SmallVector<char, 0> object;
  llvm::raw_svector_ostream stream(object);
  llvm::legacy::PassManager emit;
  if ((*machine)->addPassesToEmitFile(emit, stream, nullptr, llvm::CodeGenFileType::ObjectFile))
    throw CompileError::make(loc, op, "the host target cannot emit object files");
  emit.run(*ir);
  return std::string(object.begin(), object.end());
}

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

  auto buffer = llvm::MemoryBuffer::getMemBufferCopy(llvm::StringRef(object.data(), object.size()),
                                                      "kiln-object");
  if (llvm::Error error = (*jit)->addObjectFile(std::move(buffer)))
    throw CompileError::make(loc, op, "cannot link the compiled object: ", message(std::move(error)));
  return std::unique_ptr<JitEngine>(new JitEngine(std::move(*jit), std::string(op), loc));
}

JitEngine::JitEngine(std::unique_ptr<llvm::orc::LLJIT> jit, std::string op, SourceLoc loc)
    : jit_(std::move(jit)), op_(std::move(op)), loc_(loc) {}

JitEngine::~JitEngine() = default;

void* JitEngine::lookup(std::string_view name) const {
  auto address = jit_->lookup(llvm::StringRef(name.data(), name.size()));
  if (!address)
    throw CompileError::make(loc_, op_, "the compiled program has no function '", name, "': ",
                             message(address.takeError()));
  return address->toPtr<void*>();
}

}  // namespace kiln::runtime

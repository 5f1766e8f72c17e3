// RUN: kiln-opt %s --kiln-merge-kernels -split-input-file -verify-diagnostics --allow-unregistered-dialect

// kiln-merge-kernels fails, naming the op, on a kernels module that was not fully lowered
// and on a kernel definition whose name the host module already defines.

module {
  llvm.func @main_kernel_0(!llvm.ptr)
  module @kiln_kernels {
    // expected-error@+1 {{'func.func' op is still in the kernels module after lowering; only LLVM dialect ops can join the host}}
    func.func @main_kernel_0(%x: memref<4xf32>) {
      return
    }
  }
}

// -----

// An unregistered op has no dialect: an error too, not a crash.
module {
  module @kiln_kernels {
    // expected-error@+1 {{'test.kernel' op is still in the kernels module after lowering; only LLVM dialect ops can join the host}}
    "test.kernel"() : () -> ()
  }
}

// -----

module {
  llvm.func @main_kernel_0(%x: !llvm.ptr) {
    llvm.return
  }
  module @kiln_kernels {
    // expected-error@+1 {{'llvm.func' op defines a symbol the host module already has}}
    llvm.func @main_kernel_0(%x: !llvm.ptr) {
      llvm.return
    }
  }
}

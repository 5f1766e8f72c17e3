// RUN: kiln-opt %s --kiln-join-kernel-modules -split-input-file -verify-diagnostics

// An exported symbol two kernel modules define differently cannot be renamed (the host
// calls it by name): joining them is an error.
module {
  module {
    llvm.func @main_kernel_0(%x: i64) -> i64 {
      llvm.return %x : i64
    }
  }
  module {
    // expected-error@+1 {{'llvm.func' op defines @main_kernel_0, which another kernel defines differently}}
    llvm.func @main_kernel_0(%x: i64) -> i64 {
      %0 = llvm.add %x, %x : i64
      llvm.return %0 : i64
    }
  }
}

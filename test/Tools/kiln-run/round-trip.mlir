// A traced model dumped by jit::dump, printed again by kiln-opt, and run by kiln-run gives
// the trace's in-process outputs byte for byte (both compile the same program the same
// way, compiled code is deterministic, and save_npy writes the same header for the same
// dtype and shape).

// RUN: rm -rf %t && mkdir -p %t
// RUN: make-traced-model %t

// Bytecode, then kiln-opt to text.
// RUN: kiln-opt %t/model.mlirbc -o %t/from-bytecode.mlir
// RUN: kiln-run %t/from-bytecode.mlir --input x=%t/x.npy --input shift=%t/shift.npy \
// RUN:   --output-dir %t/out1 | FileCheck %s
// RUN: cmp %t/out1/logits.npy %t/expected/logits.npy
// RUN: cmp %t/out1/probs.npy %t/expected/probs.npy
// CHECK:      logits: float32 [5, 3] -> {{.*}}out1/logits.npy
// CHECK-NEXT: probs: float32 [5, 3] -> {{.*}}out1/probs.npy

// Text through kiln-opt twice, inputs given in the graph's order.
// RUN: kiln-opt %t/model.mlir | kiln-opt -o %t/from-text.mlir
// RUN: kiln-run %t/from-text.mlir %t/x.npy %t/shift.npy --output-dir %t/out2
// RUN: cmp %t/out2/logits.npy %t/expected/logits.npy
// RUN: cmp %t/out2/probs.npy %t/expected/probs.npy

// Text back to bytecode, and the dumped bytecode itself, timed.
// RUN: kiln-opt %t/model.mlir --emit-bytecode -o %t/from-text.mlirbc
// kiln-opt's bytecode has no hash Kiln can check: refused, then read when trusted.
// RUN: not kiln-run %t/from-text.mlirbc --input=x=%t/x.npy --input=shift=%t/shift.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=UNTRUSTED
// UNTRUSTED: bytecode from another writer (producer 'MLIR{{.*}}') has no hash Kiln can check
// RUN: env KILN_TRUST_BYTECODE=1 kiln-run %t/from-text.mlirbc --input=x=%t/x.npy \
// RUN:   --input=shift=%t/shift.npy --output-dir=%t/out3
// RUN: cmp %t/out3/probs.npy %t/expected/probs.npy
// RUN: kiln-run %t/model.mlirbc --input x=%t/x.npy --input shift=%t/shift.npy \
// RUN:   --output-dir %t/out4 --repeat 3 --warmup 1 | FileCheck %s --check-prefix=TIME
// RUN: cmp %t/out4/logits.npy %t/expected/logits.npy
// TIME:      logits: float32 [5, 3]
// TIME-NEXT: probs: float32 [5, 3]
// TIME-NEXT: time per run: median {{[0-9]+\.[0-9]+}} ms, min {{[0-9]+\.[0-9]+}} ms (3 runs after 1 warm-up runs)

// The names and blobs survive kiln-opt.
// RUN: FileCheck %s --check-prefix=TEXT < %t/from-bytecode.mlir
// TEXT: kiln.name = "x"
// TEXT: kiln.name = "logits"
// TEXT: dense_resource<constant_
// TEXT: dialect_resources

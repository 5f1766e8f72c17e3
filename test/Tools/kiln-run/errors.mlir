// kiln-run's mistakes are one line on stderr and exit code 2. The graph is this file.

// RUN: rm -rf %t && mkdir -p %t
// RUN: make-npy %t/f23.npy float32 2 3
// RUN: make-npy %t/f32.npy float32 3 2
// RUN: make-npy %t/i23.npy int64 2 3

// RUN: kiln-run %s --input x=%t/f23.npy --input y=%t/f23.npy | FileCheck %s --check-prefix=OK
// OK: sum: float32 [2, 3]

// --backend picks who runs the graph; an unknown name lists the backends.
// RUN: kiln-run %s --backend INTERP %t/f23.npy %t/f23.npy | FileCheck %s --check-prefix=OK
// RUN: kiln-run %s --backend=MLIR %t/f23.npy %t/f23.npy | FileCheck %s --check-prefix=OK
// RUN: kiln-run %s --backend HALIDE %t/f23.npy %t/f23.npy | FileCheck %s --check-prefix=OK
// RUN: kiln-run %s --backend TPU %t/f23.npy %t/f23.npy 2> %t/backend.txt; test $? -eq 2
// RUN: count 1 < %t/backend.txt
// RUN: FileCheck %s --check-prefix=BACKEND < %t/backend.txt
// BACKEND: kiln-run: CompileOptions::backend=TPU names no backend; available: INTERP ({{.*}}), MLIR ({{.*}}), HALIDE ({{.*}}), NVRTC ({{.*}})
// RUN: not kiln-run %s --backend= 2>&1 | FileCheck %s --check-prefix=NO-BACKEND
// NO-BACKEND: kiln-run: --backend needs a name (MLIR, INTERP)

// RUN: kiln-run %s --input x=%t/f23.npy 2> %t/missing.txt; test $? -eq 2
// RUN: count 1 < %t/missing.txt
// RUN: FileCheck %s --check-prefix=MISSING < %t/missing.txt
// MISSING: kiln-run: missing input 'y'; pass --input y=FILE.npy

// RUN: not kiln-run %s --input x=%t/f23.npy --input z=%t/f23.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: kiln-run: unknown input 'z'; the graph takes x, y

// RUN: not kiln-run %s %t/f23.npy --input x=%t/f23.npy 2>&1 | FileCheck %s --check-prefix=TWICE
// TWICE: kiln-run: input 'x' is given twice

// RUN: kiln-run %s --input x=%t/f32.npy --input y=%t/f23.npy 2> %t/shape.txt; test $? -eq 2
// RUN: count 1 < %t/shape.txt
// RUN: FileCheck %s --check-prefix=SHAPE < %t/shape.txt
// SHAPE: kiln-run: {{.*}}errors.mlir: input 'x' has shape [3, 2] but the graph takes [2, 3]

// RUN: not kiln-run %s %t/f23.npy %t/i23.npy 2>&1 | FileCheck %s --check-prefix=DTYPE
// DTYPE: kiln-run: {{.*}}errors.mlir: input 'y' is int64 but the graph takes float32

// RUN: echo "not a graph" > %t/bad.mlirbc
// RUN: kiln-run %t/bad.mlirbc 2> %t/bad.txt; test $? -eq 2
// RUN: count 1 < %t/bad.txt
// RUN: FileCheck %s --check-prefix=BADFILE < %t/bad.txt
// BADFILE: kiln-run: {{.*}}bad.mlirbc: not a valid kiln graph: line 1:1:

// RUN: not kiln-run %t/none.mlirbc 2>&1 | FileCheck %s --check-prefix=NOFILE
// NOFILE: kiln-run: {{.*}}none.mlirbc: cannot open: No such file or directory

// RUN: echo "not npy" > %t/bad.npy
// RUN: not kiln-run %s --input x=%t/bad.npy --input y=%t/f23.npy 2>&1 | FileCheck %s --check-prefix=BADNPY
// BADNPY: kiln-run: {{.*}}bad.npy:

// RUN: kiln-run %s --repeat many 2> %t/flag.txt; test $? -eq 2
// RUN: FileCheck %s --check-prefix=FLAG < %t/flag.txt
// FLAG: kiln-run: --repeat needs a count (0 or more), got 'many'
// RUN: not kiln-run %s --frobnicate 2>&1 | FileCheck %s --check-prefix=UNKNOWN-FLAG
// UNKNOWN-FLAG: kiln-run: unknown flag '--frobnicate' (see kiln-run --help)
// RUN: not kiln-run 2>&1 | FileCheck %s --check-prefix=NO-MODEL
// NO-MODEL: kiln-run: no model given (see kiln-run --help)
// RUN: not kiln-run %s --input x 2>&1 | FileCheck %s --check-prefix=BAD-INPUT
// BAD-INPUT: kiln-run: --input needs NAME=FILE.npy, got 'x'
// RUN: not kiln-run %s --output-dir 2>&1 | FileCheck %s --check-prefix=NO-VALUE
// NO-VALUE: kiln-run: --output-dir needs a value

func.func @main(%x: tensor<2x3xf32> {kiln.input = 0 : i64, kiln.name = "x"},
                %y: tensor<2x3xf32> {kiln.input = 1 : i64, kiln.name = "y"})
    -> (tensor<2x3xf32> {kiln.name = "sum", kiln.output = 0 : i64}) {
  %s = kiln.add %x, %y : tensor<2x3xf32>
  return %s : tensor<2x3xf32>
}

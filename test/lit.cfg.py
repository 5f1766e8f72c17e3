# lit configuration for Kiln's FileCheck tests; run through Bazel (third_party/lit), which
# puts kiln-opt, FileCheck, not and count on PATH.
import os

import lit.formats

config.name = "Kiln"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.environ.get("TEST_TMPDIR", os.path.join(config.test_source_root, "Output"))
config.environment["PATH"] = os.environ["PATH"]
config.excludes = ["Inputs", "lit.cfg.py"]

# %shlibdir: mlir-runner's support libraries, in the runfiles of a test that lists
# @llvm//:mlir_runner_utils in its data (lit runs in the runfiles root), else the system's.
shlibdir = os.path.abspath(os.path.join("external", "llvm", "lib"))
if not os.path.exists(os.path.join(shlibdir, "libmlir_runner_utils.so")):
    shlibdir = "/usr/lib/llvm-22/lib"
config.substitutions.append(("%shlibdir", shlibdir))

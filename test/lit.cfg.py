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

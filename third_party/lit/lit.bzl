"""lit_test / glob_lit_tests: one Bazel test per lit test file, run by the system lit with
the tools under test and LLVM's FileCheck/not/count on PATH."""

_LIT_DATA = [
    "//test:lit_config",
    "@llvm//:lit",
    "@llvm//:lit_tools",
]

def lit_test(name, src, tools = [], data = [], size = "small", **kwargs):
    """A Bazel test running lit on one file; `tools` are binaries the RUN lines call."""
    native.sh_test(
        name = name,
        srcs = ["//third_party/lit:lit_runner.sh"],
        args = ["--tool=$(rootpath %s)" % t for t in tools] + ["$(rootpath %s)" % src],
        data = [src] + tools + data + _LIT_DATA,
        size = size,
        **kwargs
    )

def glob_lit_tests(tools, exclude = [], data = [], suffixes = ["mlir"], **kwargs):
    """Declares `<file>.test` for every lit test file of the package."""
    for src in native.glob(["*." + s for s in suffixes], exclude = exclude):
        lit_test(name = src + ".test", src = src, tools = tools, data = data, **kwargs)

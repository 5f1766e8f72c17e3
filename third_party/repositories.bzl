"""System-package repositories for Kiln's offline build (docs/ARCHITECTURE.md, "Build")."""

load("//third_party/cuda:cuda_configure.bzl", "cuda_configure")

_LIBTORCH_ABSENT_BUILD = """
# libtorch-dev is not installed (see third_party/system/libtorch.BUILD): empty targets.
package(default_visibility = ["//visibility:public"])

cc_library(name = "config", defines = ["KILN_HAVE_LIBTORCH=0"])

cc_library(name = "libtorch")
"""

def _libtorch_configure_impl(ctx):
    """@libtorch: Debian's LibTorch C++ when installed, else the same targets, empty."""
    prefix = ctx.os.environ.get("KILN_LIBTORCH_PREFIX", "/usr")
    disabled = ctx.os.environ.get("KILN_NO_LIBTORCH", "") not in ["", "0"]
    include = prefix + "/include"
    libdir = None
    for candidate in [prefix + "/lib/x86_64-linux-gnu", prefix + "/lib"]:
        if ctx.path(candidate + "/libtorch_cpu.so").exists and ctx.path(candidate + "/libc10.so").exists:
            libdir = candidate
            break
    header = ctx.path(include + "/torch/csrc/api/include/torch/torch.h")
    if disabled or libdir == None or not header.exists:
        ctx.file("BUILD.bazel", _LIBTORCH_ABSENT_BUILD)
        return
    for root in ["ATen", "c10", "caffe2", "torch"]:
        if ctx.path(include + "/" + root).exists:
            ctx.symlink(include + "/" + root, "include/" + root)
    ctx.template(
        "BUILD.bazel",
        Label("//third_party/system:libtorch.BUILD"),
        substitutions = {"%{libdir}": libdir},
        executable = False,
    )

# The eager peer for bench/compare (docs/BENCHMARKS.md). Optional, like @cuda:
# KILN_LIBTORCH_PREFIX picks another install, KILN_NO_LIBTORCH=1 builds without it.
libtorch_configure = repository_rule(
    implementation = _libtorch_configure_impl,
    environ = ["KILN_LIBTORCH_PREFIX", "KILN_NO_LIBTORCH"],
    local = True,
)

def kiln_system_repositories():
    """Declares every external repository; nothing here downloads."""
    native.new_local_repository(
        name = "llvm",
        path = "/usr/lib/llvm-22",
        build_file = "@//third_party/llvm:llvm.BUILD",
    )
    native.new_local_repository(
        name = "dnnl",
        path = "/usr",
        build_file = "@//third_party/system:dnnl.BUILD",
    )
    native.new_local_repository(
        name = "halide",
        path = "/usr",
        build_file = "@//third_party/system:halide.BUILD",
    )
    native.new_local_repository(
        name = "gtest",
        path = "/usr",
        build_file = "@//third_party/system:gtest.BUILD",
    )
    native.new_local_repository(
        name = "benchmark",
        path = "/usr",
        build_file = "@//third_party/system:benchmark.BUILD",
    )
    native.new_local_repository(
        name = "zlib",
        path = "/usr",
        build_file = "@//third_party/system:zlib.BUILD",
    )
    cuda_configure(name = "cuda")
    libtorch_configure(name = "libtorch")

"""System-package repositories for Kiln's offline build (docs/ARCHITECTURE.md, "Build")."""

load("//third_party/cuda:cuda_configure.bzl", "cuda_configure")

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

"""Repository rule for the optional CUDA toolkit at /usr/local/cuda (or $CUDA_PATH).

With the toolkit, @cuda exposes its headers, ptxas and the NVRTC/cuBLAS libraries, and
`@cuda//:config` defines KILN_HAVE_CUDA_TOOLKIT=1. Without it the repository still
exists: the same targets are empty and the define is 0, so GPU code builds to a clear
"not available" at run time instead of failing the build. The CUDA driver (libcuda.so.1) is never linked: the
runtime loads it with dlopen (DESIGN.md §7).
"""

_BUILD_WITH_CUDA = """
package(default_visibility = ["//visibility:public"])

# Depend on this to learn at compile time whether the toolkit exists.
cc_library(name = "config", defines = ["KILN_HAVE_CUDA_TOOLKIT=1"])

cc_library(
    name = "headers",
    hdrs = glob(["include/**/*.h", "include/**/*.hpp"]),
    includes = ["include"],
)

cc_library(
    name = "nvrtc",
    linkopts = ["-L{root}/lib64", "-Wl,-rpath,{root}/lib64", "-lnvrtc"],
    deps = [":headers"],
)

cc_library(
    name = "cublas",
    linkopts = ["-L{root}/lib64", "-Wl,-rpath,{root}/lib64", "-lcublas"],
    deps = [":headers"],
)

filegroup(name = "ptxas", srcs = ["bin/ptxas"])
"""

_BUILD_WITHOUT_CUDA = """
package(default_visibility = ["//visibility:public"])

cc_library(name = "config", defines = ["KILN_HAVE_CUDA_TOOLKIT=0"])

cc_library(name = "headers")

cc_library(name = "nvrtc")

cc_library(name = "cublas")

filegroup(name = "ptxas", srcs = [])
"""

def _cuda_configure_impl(ctx):
    root = ctx.os.environ.get("CUDA_PATH", "/usr/local/cuda")
    if ctx.path(root + "/bin/ptxas").exists and ctx.path(root + "/include/cuda.h").exists:
        for entry in ["bin", "include", "lib64"]:
            ctx.symlink(root + "/" + entry, entry)
        ctx.file("BUILD.bazel", _BUILD_WITH_CUDA.format(root = root))
    else:
        ctx.file("BUILD.bazel", _BUILD_WITHOUT_CUDA)

cuda_configure = repository_rule(
    implementation = _cuda_configure_impl,
    environ = ["CUDA_PATH"],
    local = True,
)

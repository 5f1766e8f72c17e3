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

_MPI_ABSENT_BUILD = """
# Open MPI is not installed (see third_party/system/mpi.BUILD): empty targets.
package(default_visibility = ["//visibility:public"])

cc_library(name = "config", defines = ["KILN_HAVE_MPI=0"])

cc_library(name = "mpi")
"""

def _mpi_flags(ctx, mpicxx, which):
    result = ctx.execute([mpicxx, "--showme:" + which])
    if result.return_code != 0:
        return None
    return [f for f in result.stdout.strip().split(" ") if f]

def _mpi_configure_impl(ctx):
    """@mpi: Open MPI's C API when mpicxx is found, else the same targets, empty."""
    disabled = ctx.os.environ.get("KILN_NO_MPI", "") not in ["", "0"]
    mpicxx = ctx.which(ctx.os.environ.get("KILN_MPICXX", "mpicxx"))
    compile = _mpi_flags(ctx, mpicxx, "compile") if mpicxx and not disabled else None
    link = _mpi_flags(ctx, mpicxx, "link") if compile != None else None
    if link == None:
        ctx.file("BUILD.bazel", _MPI_ABSENT_BUILD)
        return

    # Bazel takes header roots inside the repository: each -I directory is symlinked under
    # include/<n> (and becomes -isystem, keeping Open MPI's headers out of our warnings);
    # the library directories go on the rpath too (they are not on ld.so's path).
    includes = []
    for i, flag in enumerate([f for f in compile if f.startswith("-I")]):
        ctx.symlink(flag[2:], "include/%d" % i)
        includes.append("include/%d" % i)
    libdirs = [f[2:] for f in link if f.startswith("-L")]
    linkopts = [f for f in link if f != "-lmpi_cxx"] + ["-Wl,-rpath," + d for d in libdirs]
    ctx.template(
        "BUILD.bazel",
        Label("//third_party/system:mpi.BUILD"),
        substitutions = {
            "%{includes}": ", ".join(['"%s"' % d for d in includes]),
            "%{linkopts}": ", ".join(['"%s"' % f for f in linkopts]),
        },
        executable = False,
    )

# Data-parallel training (docs/DISTRIBUTED.md). Optional, like @libtorch: KILN_MPICXX
# picks another MPI's wrapper, KILN_NO_MPI=1 builds without it.
mpi_configure = repository_rule(
    implementation = _mpi_configure_impl,
    environ = ["KILN_MPICXX", "KILN_NO_MPI", "PATH"],
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
    native.new_local_repository(
        name = "nlohmann_json",
        path = "/usr",
        build_file = "@//third_party/system:nlohmann_json.BUILD",
    )
    cuda_configure(name = "cuda")
    libtorch_configure(name = "libtorch")
    mpi_configure(name = "mpi")

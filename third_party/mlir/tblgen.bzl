"""td_library / gentbl_cc_library: TableGen rules shaped like upstream MLIR's Bazel overlay,
driving the system mlir-tblgen from @llvm (no LLVM sources are built)."""

TdInfo = provider(
    doc = "TableGen sources and the include directories they need, transitively.",
    fields = ["transitive_sources", "transitive_includes"],
)

def _include_dirs(ctx, includes):
    root = ctx.label.workspace_root
    base = "/".join([p for p in [root, ctx.label.package] if p])
    dirs = []
    for inc in includes:
        path = "/".join([p for p in [base, inc] if p and p != "."]) or "."
        dirs.append(path)
        dirs.append(ctx.bin_dir.path + "/" + path if path != "." else ctx.bin_dir.path)
    return dirs

def _collect(deps):
    sources = [d[TdInfo].transitive_sources for d in deps]
    includes = [d[TdInfo].transitive_includes for d in deps]
    return sources, includes

def _td_library_impl(ctx):
    sources, includes = _collect(ctx.attr.deps)
    return [
        DefaultInfo(files = depset(ctx.files.srcs)),
        TdInfo(
            transitive_sources = depset(ctx.files.srcs, transitive = sources),
            transitive_includes = depset(_include_dirs(ctx, ctx.attr.includes), transitive = includes),
        ),
    ]

td_library = rule(
    implementation = _td_library_impl,
    doc = "A set of .td files other TableGen files may include.",
    attrs = {
        "srcs": attr.label_list(allow_files = [".td"]),
        "deps": attr.label_list(providers = [TdInfo]),
        "includes": attr.string_list(doc = "Include dirs relative to the package."),
    },
)

def _gentbl_rule_impl(ctx):
    sources, includes = _collect(ctx.attr.deps)
    td_file = ctx.file.td_file
    args = ctx.actions.args()
    args.add_all(ctx.attr.opts)
    args.add(td_file)
    args.add("-I", ".")
    args.add("-I", ctx.bin_dir.path)
    args.add("-I", td_file.dirname)
    args.add_all(depset(transitive = includes), before_each = "-I")
    args.add("-o", ctx.outputs.out)
    ctx.actions.run(
        outputs = [ctx.outputs.out],
        inputs = depset([td_file], transitive = sources),
        executable = ctx.executable.tblgen,
        arguments = [args],
        mnemonic = "TdGenerate",
        progress_message = "Generating %s" % ctx.outputs.out.short_path,
    )

gentbl_rule = rule(
    implementation = _gentbl_rule_impl,
    doc = "Runs TableGen once: opts + td_file -> out.",
    attrs = {
        "td_file": attr.label(allow_single_file = [".td"], mandatory = True),
        "deps": attr.label_list(providers = [TdInfo]),
        "opts": attr.string_list(),
        "out": attr.output(mandatory = True),
        "tblgen": attr.label(executable = True, cfg = "exec", allow_single_file = True, mandatory = True),
    },
)

def gentbl_cc_library(name, tbl_outs, td_file, deps = [], tblgen = "@llvm//:bin/mlir-tblgen", **kwargs):
    """Generates each (opts, out) of tbl_outs and wraps the outputs in a cc_library.

    Outputs land in the calling package, so they are included as "<package>/<out>".
    """
    outs = []
    for opts, out in tbl_outs:
        gentbl_rule(
            name = "%s_%s_gen" % (name, out.replace("/", "_").replace(".", "_")),
            td_file = td_file,
            deps = deps,
            opts = opts,
            out = out,
            tblgen = tblgen,
        )
        outs.append(out)
    native.cc_library(
        name = name,
        textual_hdrs = outs,
        **kwargs
    )

#!/usr/bin/env bash
# Builds the self-contained bundle scripts/gpu-check.sh runs on a GPU machine, which has a
# CUDA driver, the CUDA libraries and PyTorch but no Bazel, LLVM or Debian packages, and
# takes at most 64 MiB of files along (docs/GPU.md). The bundle holds the GPU test binaries
# and the eager example, optimized, linked statically (LLVM and MLIR from Debian's static
# archives, only what each binary uses; HALIDE left out) and stripped, with the shared
# libraries they need that such a machine lacks (oneDNN and its OpenCL loader),
# xz-compressed, and Fashion-MNIST.
#
# With --halide, the HALIDE bundle instead (default DIR gpu-bundle-halide): CudaTraceTest,
# which runs every traced case under INTERP, MLIR, HALIDE and NVRTC, and bench/cuda_step
# (its traced rows under MLIR, NVRTC and HALIDE), both with HALIDE built in, and Halide 14 with its LLVM 14 (shared libraries, 28 MB xz'd),
# which together with the rest do not fit beside the main bundle. libLLVM-14 names libz3
# and libxml2 (with ICU, 15 MB xz'd more) for code Halide never runs (LLVM's static
# analyzer, Windows manifests): those two are stand-ins made here that define what
# libLLVM-14 imports from them and abort, saying so, if called.
#
#   bash scripts/gpu-bundle.sh [--halide] [DIR]      (DIR is ignored by git)
#
# Then, on the GPU machine, from the repository root: bash scripts/gpu-check.sh [DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
halide=0
if [[ ${1:-} == --halide ]]; then halide=1; shift; fi
# A GPU machine has no LLVM or MLIR: link them statically (only the objects used), and every
# Kiln library into the binary. Halide carries its own LLVM 14 as a shared library too big
# to travel with the rest, so the main bundle leaves HALIDE out (it reports "not built").
static=(--define kiln_llvm=static --dynamic_mode=off --linkopt=-fuse-ld=lld)
if (( halide )); then
  out="${1:-gpu-bundle-halide}"
  targets=(//test/gpu:CudaTraceTest //bench:cuda_step)
else
  out="${1:-gpu-bundle}"
  targets=(//test/gpu:CudaDeviceTest //test/gpu:CudaOpsTest //test/gpu:CudaModuleTest
           //test/gpu:CudaTraceTest //examples:fashion_mnist_mlp //bench:cuda_step)
  static+=(--define kiln_halide=off)
fi
bazel build -c opt "${static[@]}" "${targets[@]}"  # bench/ is private: build it by label, copy it by path
bin="$(bazel info -c opt "${static[@]}" bazel-bin)"

stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/kiln-gpu/bin" "$stage/kiln-gpu/lib"
for target in "${targets[@]}"; do
  path="$bin/${target#//}"
  path="${path/://}"
  install -m 755 "$path" "$stage/kiln-gpu/bin/"
  strip "$stage/kiln-gpu/bin/$(basename "$path")"
done
# Shared libraries beyond the C and C++ runtimes, which every Linux with PyTorch has (in
# versions at least as new as Debian 12's); for HALIDE, stand-ins for libz3 and libxml2
# (whose ICU then stays behind).
for f in "$stage"/kiln-gpu/bin/*; do
  ldd "$f" | awk '$3 ~ /^\// {print $3}'
done | sort -u | while read -r lib; do
  case "$(basename "$lib")" in
    libc.so.*|libm.so.*|libstdc++.so.*|libgcc_s.so.*|ld-linux*|libpthread.so.*|libdl.so.*|librt.so.*) ;;
    libz3.so.*|libxml2.so.*|libicu*) ;;
    *) cp -L "$lib" "$stage/kiln-gpu/lib/" && strip --strip-unneeded "$stage/kiln-gpu/lib/$(basename "$lib")" ;;
  esac
done
# stand_in SONAME PATTERN: a library named SONAME defining every symbol libLLVM-14 imports
# that matches PATTERN, under the versions it asks for; a function aborts with a message.
stand_in() {
  local soname=$1 pattern=$2 llvm="$stage/kiln-gpu/lib/libLLVM-14.so.1" c="$stage/$1.c" map="$stage/$1.map"
  printf '#include <stdio.h>\n#include <stdlib.h>\nstatic void called(const char* f) {\n  fprintf(stderr, "%s: %%s called, but this is a stand-in (scripts/gpu-bundle.sh)\\n", f);\n  abort();\n}\n' \
    "$soname" > "$c"
  readelf --dyn-syms -W "$llvm" | awk -v p="$pattern" '$7 == "UND" && $8 ~ p {print $4, $8}' | sort -u > "$stage/$1.syms"
  while read -r type symbol; do
    if [[ $type == OBJECT ]]; then echo "void* ${symbol%%@*} = 0;"; else echo "void ${symbol%%@*}(void) { called(\"${symbol%%@*}\"); }"; fi
  done < "$stage/$1.syms" >> "$c"
  awk '{n = split($2, s, "@"); if (n > 1) v[s[2]] = v[s[2]] " " s[1] ";"} END {for (k in v) print k " { global:" v[k] " };"}' \
    "$stage/$1.syms" > "$map"
  local versions=()
  [[ -s $map ]] && versions=(-Wl,--version-script="$map")
  gcc -shared -fPIC -O1 -o "$stage/kiln-gpu/lib/$soname" "$c" -Wl,-soname,"$soname" "${versions[@]}"
  echo "gpu-bundle: stand-in $soname: $(wc -l < "$stage/$1.syms") symbols"
}
if (( halide )); then
  stand_in libz3.so.4 '^Z3_'
  stand_in libxml2.so.2 '^xml'
fi
git rev-parse --short HEAD > "$stage/kiln-gpu/COMMIT"

mkdir -p "$out"
tmp="$out/kiln-gpu.tar.xz.tmp.$$"
# One dictionary over the whole tarball: the binaries that link LLVM and MLIR share most of
# their bytes, which xz then stores once (the default 64 MiB dictionary is smaller than one).
tar -C "$stage" -cf - kiln-gpu | xz -T0 --lzma2=preset=9,dict=192MiB > "$tmp"
mv "$tmp" "$out/kiln-gpu.tar.xz"
data=/usr/share/datasets/fashion-mnist
if (( halide )); then
  :  # the HALIDE bundle runs no example
elif [[ -d $data ]]; then
  # The idx files uncompressed, then xz'd together: 4 MB less than Debian's .gz files, which
  # the working tree's own 8 MB need (the data loaders read either form).
  if [[ ! -s $out/fashion-mnist.tar.xz ]]; then
    raw="$(mktemp -d)"
    for f in "$data"/*-ubyte.gz; do gzip -dc "$f" > "$raw/$(basename "$f" .gz)"; done
    tar -C "$raw" -cf - . | xz -T0 -9e > "$out/fashion-mnist.tar.xz.tmp.$$"
    mv "$out/fashion-mnist.tar.xz.tmp.$$" "$out/fashion-mnist.tar.xz"
    rm -rf "$raw"
  fi
  rm -rf "$out/fashion-mnist"
else
  echo "gpu-bundle: no Fashion-MNIST at $data (bash scripts/bootstrap.sh installs it); the example step will be skipped" >&2
fi
# What travels to a GPU machine: the bundle and the repository's tracked files, 64 MiB in all,
# counted as the device tool counts them: in disk blocks, so each small file takes at least
# one (by bytes the tree is 8 MB, in blocks 9.4 MiB; a HALIDE bundle of 63.5 MiB by bytes
# was refused).
size=$(( ($(du -sk "$out" | cut -f1) + $(git ls-files -z | du -ck --files0-from=- | tail -1 | cut -f1)) * 1024 ))
if (( size > 64 * 1024 * 1024 )); then
  echo "gpu-bundle: $out and the tracked files are $((size / 1048576)) MiB in disk blocks, over the 64 MiB a GPU machine takes along" >&2
  exit 1
fi
echo "gpu-bundle: $(du -sh "$out" | cut -f1) in $out, $((size / 1048576)) MiB with the tracked files, in disk blocks ($(tar -tJf "$out/kiln-gpu.tar.xz" | grep -c /bin/.) binaries, commit $(cat "$stage/kiln-gpu/COMMIT"))"

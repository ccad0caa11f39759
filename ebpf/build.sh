#!/bin/sh
# Rebuilds ebpf/drops.bpf.o from drops.bpf.c with the pinned compiler, so the
# committed object is reproducible byte for byte (.ci/run checks it).
# Pinned: Debian bookworm's default clang-14/llvm-14 (apt-get install
# clang-14 llvm-14). -mcpu=v3 because clang 14 and 19 default to BPF ISA v1;
# `llvm-strip -g` drops only debug info: plain strip would also remove .BTF
# and the symbols the loader needs.
# Usage: ebpf/build.sh [OUTPUT]   (default: ebpf/drops.bpf.o)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/drops.bpf.o}
CLANG=${CLANG:-clang-14}
STRIP=${STRIP:-llvm-strip-14}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The source's path is recorded in the object's BTF line info: map the
# checkout's folder to "ebpf" so the bytes do not depend on where it is.
(cd "$here" && "$CLANG" -O2 -g -target bpf -mcpu=v3 -Wall -Werror \
	-fdebug-prefix-map="$here"=ebpf -c drops.bpf.c -o "$tmp/drops.bpf.o")
"$STRIP" -g "$tmp/drops.bpf.o"
cp "$tmp/drops.bpf.o" "$out"

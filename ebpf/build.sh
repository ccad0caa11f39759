#!/bin/sh
# Rebuilds every ebpf/NAME.bpf.o from NAME.bpf.c with the pinned compiler, so
# the committed objects are reproducible byte for byte (.ci/run checks them).
# Pinned: Debian bookworm's default clang-14/llvm-14 (apt-get install
# clang-14 llvm-14). -mcpu=v3 because clang 14 and 19 default to BPF ISA v1;
# `llvm-strip -g` drops only debug info: plain strip would also remove .BTF
# and the symbols the loader needs.
# Usage: ebpf/build.sh [OUTPUT_DIR]   (default: ebpf/)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here}
CLANG=${CLANG:-clang-14}
STRIP=${STRIP:-llvm-strip-14}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for source in "$here"/*.bpf.c; do
	name=$(basename "$source" .c)
	# The source's path is recorded in the object's BTF line info: map the
	# checkout's folder to "ebpf" so the bytes do not depend on where it is.
	(cd "$here" && "$CLANG" -O2 -g -target bpf -mcpu=v3 -Wall -Werror \
		-fdebug-prefix-map="$here"=ebpf -c "$name.c" -o "$tmp/$name.o")
	"$STRIP" -g "$tmp/$name.o"
	cp "$tmp/$name.o" "$out/$name.o"
done

#!/bin/sh
# Builds __NAME__.wasm, the provider component, next to this script: clang
# compiles the provider, the SDK and its glue into a WebAssembly core module
# (a WASI reactor), and cairn turns it into a component. Needs clang, lld,
# wasi-libc and the wasm32 compiler runtime (Debian: apt-get install clang
# lld wasi-libc libclang-rt-dev-wasm32), and cairn on PATH (or CAIRN set to
# it). CC and WASI_SYSROOT may name another clang and sysroot.
set -eu
cd "$(dirname "$0")"
"${CC:-clang}" --target=wasm32-wasi --sysroot="${WASI_SYSROOT:-/usr}" -mexec-model=reactor -O2 \
    -Wl,--strip-debug -Isdk -o __NAME__.core.wasm provider.c sdk/cairn.c sdk/glue/provider_world.c
# The WIT world is embedded and WASI adapted to 0.2 by cairn itself; the
# name and version are in the file already (CAIRN_PROVIDER in provider.c).
"${CAIRN:-cairn}" providers componentize __NAME__.core.wasm -o __NAME__.wasm --wit wit
rm -f __NAME__.core.wasm
echo "built $(pwd)/__NAME__.wasm"

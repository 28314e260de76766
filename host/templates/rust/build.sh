#!/bin/sh
# Builds __NAME__.wasm, the provider component, next to this script.
set -eu
cd "$(dirname "$0")"
cargo rustc --release --target wasm32-wasip2 --crate-type cdylib
target_dir="${CARGO_TARGET_DIR:-target}"
cp "$target_dir/wasm32-wasip2/release/cairn_provider___NAME__.wasm" __NAME__.wasm
echo "built $(pwd)/__NAME__.wasm"

#!/bin/sh
# Runs the provider's own tests (test_provider.c) natively: the SDK leaves
# its glue out when not compiled for WebAssembly.
set -eu
cd "$(dirname "$0")"
bin="$(mktemp -d)"
trap 'rm -rf "$bin"' EXIT
"${HOST_CC:-cc}" -std=c11 -Wall -g -Isdk -o "$bin/test_provider" test_provider.c provider.c sdk/cairn.c -lm
"$bin/test_provider"

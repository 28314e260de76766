#!/bin/sh
# Builds the rabbitmq provider component: Go (1.26 or later; GOOS=wasip1, a
# reactor module) compiles the core module, `cairn providers componentize`
# makes it a component against the Go SDK's world (cairn's provider world
# plus the wasi:http client), and the SDK's stamp-identity writes the name
# and version cairn reads before running any of it.
#
#   providers/rabbitmq/build.sh [OUT.wasm]   (default: providers/rabbitmq/rabbitmq.wasm)
#
# Set CAIRN to the cairn binary when it is not on PATH.
set -eu
out=$(realpath -m "${1:-$(dirname "$0")/rabbitmq.wasm}")
cd "$(dirname "$0")"
mkdir -p build
GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -ldflags=-checklinkname=0 -o build/core.wasm .
"${CAIRN:-cairn}" providers componentize build/core.wasm --wit ../sdk-go/wit --world go-provider -o "$out"
go run cairn.dev/sdk-go/cmd/stamp-identity "$out" rabbitmq 0.1.0
echo "built $out"

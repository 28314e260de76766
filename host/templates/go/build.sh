#!/bin/sh
# Builds __NAME__.wasm, the provider component, next to this script: Go
# (1.26 or later; GOOS=wasip1, a reactor module) compiles the core module,
# `cairn providers componentize` makes it a component (with the WASI
# adapter cairn carries), and the SDK's stamp-identity writes the name and
# version cairn reads from the file before running any of it.
# Set CAIRN to the cairn binary when it is not on PATH.
set -eu
cd "$(dirname "$0")"
mkdir -p build
GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -ldflags=-checklinkname=0 -o build/core.wasm .
"${CAIRN:-cairn}" providers componentize build/core.wasm --wit sdk/wit --world go-provider -o __NAME__.wasm
go run cairn.dev/sdk-go/cmd/stamp-identity __NAME__.wasm __NAME__ 0.1.0
echo "built $(pwd)/__NAME__.wasm"

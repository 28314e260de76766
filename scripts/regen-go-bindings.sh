#!/usr/bin/env bash
# Regenerates the Go SDK's committed bindings (providers/sdk-go/internal/wit)
# from its WIT (providers/sdk-go/wit, which links cairn's wit/provider.wit):
# run it after changing wit/. Neither provider authors nor CI run it; they
# build against the committed bindings, and a test fails (saying to run
# this) when the WIT no longer matches what they were generated from.
#
# Needs wit-bindgen-cli 0.63 (`wit-bindgen go`): $WIT_BINDGEN, or one
# installed into target/tools/wit-bindgen on first use (cargo install, about
# ten minutes).
set -euo pipefail
cd "$(dirname "$0")/.."

version=0.63.0
sdk=providers/sdk-go
out="$sdk/internal/wit"
bindgen="${WIT_BINDGEN:-$PWD/target/tools/wit-bindgen/bin/wit-bindgen}"
if [[ "$("$bindgen" --version 2>/dev/null || true)" != "wit-bindgen-cli $version"* ]]; then
    echo "regen-go-bindings.sh: installing wit-bindgen-cli $version into target/tools/wit-bindgen" >&2
    cargo install --locked --quiet wit-bindgen-cli --version "$version" --root "$PWD/target/tools/wit-bindgen"
    bindgen="$PWD/target/tools/wit-bindgen/bin/wit-bindgen"
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
"$bindgen" go "$sdk/wit" --world go-provider --pkg-name cairn.dev/sdk-go/internal/wit --out-dir "$tmp/gen" --quiet
# The generated code imports the component-model runtime package
# go.bytecodealliance.org/pkg, which the SDK vendors under internal/gopkg
# (see its README): point the imports there, so that a provider's go.mod
# needs only the SDK.
find "$tmp/gen" -name '*.go' -exec sed -i 's#"go.bytecodealliance.org/pkg/wit/#"cairn.dev/sdk-go/internal/gopkg/wit/#' {} +
# The hand-written files among them: the exported functions of each
# exported interface, which hand each call to the SDK (wit-bindgen would
# write stubs there).
handlers=(exports/export_cairn_provider_provider/handler.go exports/export_cairn_provider_state_moves/handler.go exports/export_cairn_provider_ephemeral_resources/handler.go)
for handler in "${handlers[@]}"; do
    mkdir -p "$tmp/kept/$(dirname "$handler")"
    cp "$out/$handler" "$tmp/kept/$handler"
done
rm -rf "$out"
mkdir -p "$out"
cp -r "$tmp/gen"/. "$out"/
cp -r "$tmp/kept"/. "$out"/
# What the bindings were made from, for the staleness test.
(cd "$sdk" && go run ./internal/withash wit) > "$out/WIT_SHA256"
# The rewritten imports sort differently.
gofmt -w "$out"
echo "regenerated $out from $sdk/wit (wit-bindgen $version)"

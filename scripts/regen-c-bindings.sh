#!/usr/bin/env bash
# Regenerates the C SDK's wit-bindgen glue (providers/sdk-c/glue/) from
# wit/provider.wit. Run it after changing wit/: a test
# (c::the_c_glue_matches_the_wit) fails until the glue is regenerated and
# committed. Neither provider authors nor CI run it: the glue is committed.
#
# It needs wit-bindgen-cli 0.63.0, installed here into target/wit-bindgen
# from crates.io when missing (about 10 minutes), or taken from
# $WIT_BINDGEN when set.
set -euo pipefail
cd "$(dirname "$0")/.."

version=0.63.0
bin="${WIT_BINDGEN:-target/wit-bindgen/bin/wit-bindgen}"
if [[ "$("$bin" --version 2>/dev/null || true)" != "wit-bindgen-cli $version"* ]]; then
    echo "regen-c-bindings.sh: installing wit-bindgen-cli $version into target/wit-bindgen" >&2
    cargo install --quiet --locked wit-bindgen-cli --version "$version" --root target/wit-bindgen
    bin=target/wit-bindgen/bin/wit-bindgen
fi

out=providers/sdk-c/glue
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
"$bin" c wit --world provider-world --out-dir "$tmp" >/dev/null
mkdir -p "$out"
cp "$tmp/provider_world.h" "$tmp/provider_world.c" "$out/"
# The world is embedded by `cairn providers componentize` from wit/, so the
# generated component-type object is not needed (nor committed).
sha256sum wit/provider.wit | cut -d' ' -f1 > "$out/WIT_SHA256"
echo "regenerated $out from wit/provider.wit" >&2

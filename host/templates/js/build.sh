#!/bin/sh
# Builds __NAME__.wasm, the provider component, next to this script, with
# componentize-js (npm install @bytecodealliance/componentize-js@0.23.0; or
# set CAIRN_COMPONENTIZE_JS to its path).
set -eu
cd "$(dirname "$0")"
"${CAIRN_COMPONENTIZE_JS:-componentize-js}" --wit wit --world-name provider-world -d fetch-event -o __NAME__.wasm app.js
# The name and version cairn reads from the file before running any of it.
node sdk/stamp-identity.mjs __NAME__.wasm __NAME__ 0.1.0
echo "built $(pwd)/__NAME__.wasm"

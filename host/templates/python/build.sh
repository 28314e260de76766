#!/bin/sh
# Builds __NAME__.wasm, the provider component, next to this script, with
# componentize-py (pip install componentize-py==0.25.1; or set
# CAIRN_COMPONENTIZE_PY to its path).
set -eu
cd "$(dirname "$0")"
"${CAIRN_COMPONENTIZE_PY:-componentize-py}" -d wit -w provider-world componentize -p sdk -p . app -o __NAME__.wasm
# The name and version cairn reads from the file before running any of it.
python3 sdk/stamp_identity.py __NAME__.wasm __NAME__ 0.1.0
echo "built $(pwd)/__NAME__.wasm"

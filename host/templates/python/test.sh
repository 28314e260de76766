#!/bin/sh
# Runs the provider's own tests with plain Python, against the bindings
# componentize-py generates from wit/.
set -eu
cd "$(dirname "$0")"
bindings="$(mktemp -d)"
trap 'rm -rf "$bindings"' EXIT
"${CAIRN_COMPONENTIZE_PY:-componentize-py}" -d wit -w provider-world bindings "$bindings"
PYTHONPATH="$bindings:sdk:." python3 -m unittest discover -p 'test_*.py'

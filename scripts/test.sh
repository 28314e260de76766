#!/usr/bin/env bash
# The README's test command: installs what the end-to-end tests need and
# is not on a fresh machine, then runs every test.
#
# The OCI registry tests start Debian's `docker-registry` (the CNCF
# distribution registry) on a free loopback port; they fail, rather than
# skip, when it is missing, so it is installed here.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v docker-registry >/dev/null 2>&1 && [ ! -x /usr/bin/docker-registry ]; then
    if [ "$(id -u)" = 0 ]; then sudo=; else sudo=sudo; fi
    echo "Installing docker-registry (for the OCI registry tests)..." >&2
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq docker-registry >/dev/null
fi

exec cargo test --workspace "$@"

#!/usr/bin/env bash
# Benchmark of the bundled postgresql provider (issue 34); prints numbers,
# never passes or fails.
#
# Starts Debian's PostgreSQL on a free loopback port in a temporary
# directory (as `nobody` when run as root, like the end-to-end tests), makes
# 10 schemas, then for each -parallelism P in 1, 10, 32 and each sandbox
# max_concurrency C in 8 (the default) and 32: applies 100 roles and 1,000
# grants (every role USAGE on every schema), runs a plan that finds no
# changes (refreshing all 1,100), and destroys them. For each run it prints
# the wall time and the server's round trips: the transactions PostgreSQL
# counted (pg_stat_database, xact_commit + xact_rollback: one a statement
# string the provider sends) and the sessions opened.
#
# Usage: scripts/bench-postgresql.sh            (CAIRN=path/to/cairn to choose
#        the binary; default target/release/cairn, else target/debug/cairn)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cairn=${CAIRN:-}
if [ -z "$cairn" ]; then
  if [ -x "$root/target/release/cairn" ]; then cairn=$root/target/release/cairn; else cairn=$root/target/debug/cairn; fi
fi
[ -x "$cairn" ] || { echo "no cairn binary at $cairn: cargo build --release -p cairn" >&2; exit 1; }
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -n "$bin" ] || { echo "PostgreSQL is missing: apt-get install postgresql" >&2; exit 1; }

work=$(mktemp -d /tmp/cairn-bench-pg.XXXXXX)
run_as=()
if [ "$(id -u)" = 0 ]; then
  chown nobody "$work"
  run_as=(setpriv --reuid="$(id -u nobody)" --regid="$(id -g nobody)" --clear-groups --)
fi
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"${run_as[@]}" "$bin/initdb" -D "$work/data" -U postgres --auth=trust -E UTF8 --no-sync >/dev/null
"${run_as[@]}" "$bin/postgres" -D "$work/data" -p "$port" -c listen_addresses=127.0.0.1 \
  -c unix_socket_directories= -c fsync=off -c max_connections=300 >"$work/server.log" 2>&1 &
server=$!
trap 'kill -INT $server 2>/dev/null; wait $server 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 100); do "$bin/pg_isready" -q -h 127.0.0.1 -p "$port" && break; sleep 0.1; done

psql() { "$bin/psql" -X -q -t -A -h 127.0.0.1 -p "$port" -U postgres -d postgres -c "$1"; }
for s in $(seq 0 9); do psql "CREATE SCHEMA s$s" ; done

# Transactions and sessions the server counted so far (after the last
# session's statistics reached it).
counters() {
  sleep 1.5
  psql "SELECT sum(xact_commit + xact_rollback), sum(sessions) FROM pg_stat_database"
}

config() { # max_concurrency
  cat <<EOF
provider "postgresql" {
  host     = "127.0.0.1"
  port     = $port
  username = "postgres"
  sslmode  = "disable"
  sandbox {
    connect         = ["127.0.0.1:$port"]
    max_concurrency = $1
  }
}

resource "postgresql_role" "r" {
  count = 100
  name  = "bench_\${count.index}"
}

resource "postgresql_grant" "g" {
  count       = 1000
  role        = postgresql_role.r[floor(count.index / 10)].name
  database    = "postgres"
  schema      = "s\${count.index % 10}"
  object_type = "schema"
  privileges  = ["USAGE"]
}
EOF
}

# Runs `cairn ARGS` in the configuration and prints: wall seconds,
# transactions, sessions.
measure() {
  local before after start end
  before=$(counters)
  start=$(date +%s.%N)
  "$cairn" "$@" "$work/cfg" >"$work/out.log" 2>&1 || { cat "$work/out.log" >&2; exit 1; }
  end=$(date +%s.%N)
  after=$(counters)
  # The counters' own psql session and its statement count once each.
  awk -v s="$start" -v e="$end" -v b="$before" -v a="$after" 'BEGIN {
    split(b, x, "|"); split(a, y, "|");
    printf "%7.2f s %8d round trips %5d sessions", e - s, y[1] - x[1] - 1, y[2] - x[2] - 1 }'
}

echo "cairn: $cairn; PostgreSQL $("$bin/postgres" --version | awk '{print $3}') on 127.0.0.1:$port"
echo "100 roles + 1,000 grants (USAGE of 10 schemas for each role)"
printf '%-12s %-16s %-48s %-48s\n' parallelism max_concurrency "apply" "no-op plan (refresh of 1,100)"
mkdir -p "$work/cfg"
for c in 8 32; do
  config "$c" >"$work/cfg/main.tf"
  "$cairn" init "$work/cfg" >/dev/null
  for p in 1 10 32; do
    apply=$(measure apply -auto-approve -parallelism=$p)
    grep -q "1100 added" "$work/out.log" || { cat "$work/out.log" >&2; exit 1; }
    plan=$(measure plan -parallelism=$p)
    grep -q "No changes" "$work/out.log" || { cat "$work/out.log" >&2; exit 1; }
    printf '%-12s %-16s %-48s %-48s\n' "$p" "$c" "$apply" "$plan"
    "$cairn" destroy -auto-approve -parallelism=32 "$work/cfg" >/dev/null
  done
done

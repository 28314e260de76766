#!/usr/bin/env bash
# cairn and real Terraform, side by side, on the same generated
# configurations: N null_resources in a random DAG, each referring to up to
# two earlier ones; apply from empty at -parallelism=10, then a no-op plan
# with refresh; wall time, CPU and peak RSS, medians of the runs, and the
# cairn/terraform ratio of each. It reuses the shared peer benchmark
# (../shared/peer/peer-bench.sh beside this checkout, see its README), which
# sets up Terraform's null provider from Debian's Go packages when missing.
#
# Terraform rewrites its whole state file once per resource, so its apply
# grows as N² (about 2 minutes at 3,000 resources on a 2-core machine): it
# only runs up to --tf-max resources; larger N run cairn alone.
#
# Usage: scripts/bench-vs-terraform.sh [-r RUNS] [-t TIMEOUT_S] [--tf-max N] [N ...]
#   N...        sizes (default: 100 1000 3000 10000 100000)
#   -r RUNS     runs per tool and N (default 3)
#   -t SECONDS  a command running longer is stopped and shown as ">SECONDS" (default 600)
#   --tf-max N  largest N Terraform runs at (default 3000)
# Env: CAIRN (default: target/release/cairn of this checkout, built if missing),
#      TERRAFORM, SEED, PEER (the peer benchmark directory).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/.." && pwd)"
PEER="${PEER:-$REPO/../shared/peer}"
RUNS=3 TMO=600 TF_MAX=3000 NS=()
while [ $# -gt 0 ]; do
  case "$1" in
    -r) RUNS="$2"; shift 2 ;;
    -t) TMO="$2"; shift 2 ;;
    --tf-max) TF_MAX="$2"; shift 2 ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) NS+=("$1"); shift ;;
  esac
done
[ "${#NS[@]}" -gt 0 ] || NS=(100 1000 3000 10000 100000)
[ -x "$PEER/peer-bench.sh" ] || { echo "no peer benchmark at $PEER (set PEER)" >&2; exit 1; }

if [ -z "${CAIRN:-}" ]; then
  CAIRN="$REPO/target/release/cairn"
  [ -x "$CAIRN" ] || (cd "$REPO" && cargo build --release -p cairn)
fi
export CAIRN

both=() alone=()
for n in "${NS[@]}"; do
  if [ "$n" -le "$TF_MAX" ]; then both+=("$n"); else alone+=("$n"); fi
done
WORK="$(mktemp -d "${TMPDIR:-/tmp}/bench-vs-terraform.XXXXXX")"
results=()
if [ "${#both[@]}" -gt 0 ]; then
  WORK="$WORK/both" "$PEER/peer-bench.sh" -r "$RUNS" -t "$TMO" --tools "cairn terraform" "${both[@]}" >/dev/null
  results+=("$WORK/both/results.tsv")
fi
if [ "${#alone[@]}" -gt 0 ]; then
  WORK="$WORK/alone" "$PEER/peer-bench.sh" -r "$RUNS" -t "$TMO" --tools cairn "${alone[@]}" >/dev/null
  results+=("$WORK/alone/results.tsv")
fi

echo "cairn: $("$CAIRN" --version 2>&1 | head -1) ($CAIRN)"
echo "terraform: $("${TERRAFORM:-terraform}" version 2>/dev/null | head -1) (up to N=$TF_MAX)"
echo "machine: $(nproc) cores, $(date -u +%Y-%m-%d)"
echo
"$PEER/peer-bench.sh" -t "$TMO" --summary "${results[@]}"
echo "raw rows: ${results[*]}"

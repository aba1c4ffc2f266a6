#!/usr/bin/env bash
# make bench (full) / make bench-smoke: see benches/bench.py.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v wrk >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    (apt-get update -qq && apt-get install -y -qq wrk) >/dev/null 2>&1 || echo "note: could not install wrk; the drain figure is skipped"
  fi
fi
"${CHAINETL_PYTHON:-python3}" benches/bench.py "${1:-full}"
# Pacing under a quota: share of the quota, share of 429s.
echo "pacing: $("${CHAINETL_PYTHON:-python3}" benches/pacing.py "${1:-full}")"

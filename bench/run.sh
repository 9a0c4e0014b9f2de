#!/usr/bin/env bash
# Runs every benchmark built in BUILD_DIR/ (default build/) and prints its figures.
set -euo pipefail
build=${1:-build}
for b in "$build"/bench_*; do
  [ -x "$b" ] || continue
  echo "== $(basename "$b")"
  "$b"
done
# Spawn at 10,000 processes beside bench_runtime's 100,000 above (no degradation with count).
echo "== spawn at 10,000 processes"
BENCH_NO_PREEMPT=1 "$build/bench_runtime" 0 10000
# Benchmarks that are a Steward app driven by a script, beside their baseline in the same run.
echo "== messaging"
bash "$(dirname "$0")/messaging.sh" "$build"
echo "== idle"
bash "$(dirname "$0")/idle.sh" "$build/steward"
echo "== funcs"
bash "$(dirname "$0")/funcs.sh" "$build/steward"
echo "== http_server (beside nginx + Lua)"
bash "$(dirname "$0")/http_server.sh" "$build/steward"
echo "== io"
bash "$(dirname "$0")/io.sh" "$build/steward"
echo "== fs"
bash "$(dirname "$0")/fs.sh" "$build"
echo "== jit (the JIT trade-off beside plain luajit)"
bash "$(dirname "$0")/jit.sh" "$build"

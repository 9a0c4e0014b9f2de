#!/usr/bin/env bash
# Runs every benchmark built in BUILD_DIR/ (default build/) and prints its figures.
set -euo pipefail
build=${1:-build}
for b in "$build"/bench_*; do
  [ -x "$b" ] || continue
  echo "== $(basename "$b")"
  "$b"
done
# Benchmarks that are a Steward app driven by a script, beside their baseline in the same run.
echo "== funcs"
bash "$(dirname "$0")/funcs.sh" "$build/steward"
echo "== http_server (beside nginx + Lua)"
bash "$(dirname "$0")/http_server.sh" "$build/steward"
echo "== io"
bash "$(dirname "$0")/io.sh" "$build/steward"
echo "== fs"
bash "$(dirname "$0")/fs.sh" "$build"

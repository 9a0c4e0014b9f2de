#!/usr/bin/env bash
# The JIT trade-off: nbody, fannkuch and a string workload in an interpreted process (the
# default: preemptible), in a jit: true process (on the JIT pool: not preemptible) and in plain
# luajit, medians of 3; ratios against plain luajit. usage: bench/jit.sh BUILD_DIR
set -euo pipefail
build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
steward="$build/steward"
luajit=$(command -v luajit || true)

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

run_steward() { # entry name size
  "$steward" run "$here/jit" -x "b:$1" "$2" "$3" | tail -1
}
for w in "nbody 2000000" "fannkuch 10" "strings 300000"; do
  set -- $w
  name=$1 size=$2
  i=$(for _ in 1 2 3; do run_steward interp "$name" "$size"; done | median)
  j=$(for _ in 1 2 3; do run_steward jit "$name" "$size"; done | median)
  if [ -n "$luajit" ]; then
    p=$(for _ in 1 2 3; do (cd "$here/jit/src" && "$luajit" -e "
      local work = dofile('$name.lua'); local t0 = os.clock(); work($size); print(os.clock() - t0)"); done | median)
    awk -v n="$name" -v i="$i" -v j="$j" -v p="$p" 'BEGIN {
      printf "jit: %-9s interpreted %.3f s (%.2fx plain luajit), jit: true %.3f s (%.2fx), plain luajit %.3f s\n", n, i, i / p, j, j / p, p }'
  else
    echo "jit: $name interpreted $i s, jit: true $j s (plain luajit not installed)"
  fi
done

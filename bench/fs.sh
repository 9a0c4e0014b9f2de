#!/usr/bin/env bash
# fs.read throughput (bench/fs/) beside its floor in C: the same open + read + close as jobs on
# a libuv thread pool (floor_fs), one at a time and 64 at once. Usage:
# bench/fs.sh [BUILD_DIR] [N] [ROUNDS]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../build}
file=$(mktemp /tmp/steward-bench-fs.XXXXXX)
trap 'rm -f "$file"' EXIT
head -c 4096 /dev/urandom >"$file"
"$build/floor_fs" "$file" "${2:-20000}" "${3:-5}" 64
"$build/steward" run "$here/fs" -x bench:main "$(basename "$file")" "${2:-20000}" "${3:-5}" 64

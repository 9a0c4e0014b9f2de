#!/usr/bin/env bash
# io.write throughput beside print's (bench/io/), both into a pipe that cat drains.
# Usage: bench/io.sh [STEWARD] [N] [ROUNDS]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
steward=${1:-$here/../build/steward}
"$steward" run "$here/io" -x bench:main "${2:-200000}" "${3:-5}" | cat >/dev/null

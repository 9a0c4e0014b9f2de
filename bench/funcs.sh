#!/usr/bin/env bash
# funcs.call / funcs.async throughput beside process.spawn_monitored + EXIT of the same code
# (bench/funcs/). Usage: bench/funcs.sh [STEWARD] [N] [ROUNDS]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
steward=${1:-$here/../build/steward}
exec "$steward" run "$here/funcs" -x bench:main "${2:-2000}" "${3:-5}"

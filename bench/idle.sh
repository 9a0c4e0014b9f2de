#!/usr/bin/env bash
# CPU time of an idle host over 10 s (target <= 1% of one core): `steward run` of bench/idle
# (1,000 services waiting for their CANCEL), measured from /proc after a 2 s settling time;
# beside it, the same for a host with no service at all (its loops, timers, control socket).
# Then bench/idle_traffic.yaml: a host quiet after 20,000 round trips across workers (their
# spin budgets at their highest: the spin must not outlive the traffic), and the same
# trickling one round trip across workers every 1 ms (a spin that only pays at high rates:
# docs/architecture.md "Waking a worker").
# usage: bench/idle.sh [STEWARD] [SECONDS]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
steward=${1:-$here/../build/steward}
secs=${2:-10}
tick=$(getconf CLK_TCK)

# CPU seconds (user + system) of pid, all its threads.
cpu() { awk -v t="$tick" '{ print ($14 + $15) / t }' "/proc/$1/stat"; }

# Percent of one core used by a host of app dir $1 (copied: its control socket goes there).
idle_percent() {
  local dir pid a b
  dir=$(mktemp -d)
  cp "$1"/*.yaml "$dir"/
  "$steward" run "$dir" >/dev/null 2>&1 &
  pid=$!
  sleep 2
  a=$(cpu "$pid")
  sleep "$secs"
  b=$(cpu "$pid")
  kill -TERM "$pid"
  wait "$pid" || true
  rm -rf "$dir"
  awk -v a="$a" -v b="$b" -v s="$secs" 'BEGIN { printf "%.2f", 100 * (b - a) / s }'
}

empty=$(mktemp -d) quiet=$(mktemp -d) trickle=$(mktemp -d)
printf 'namespace: idle\nentries: []\n' >"$empty/app.yaml"
cp "$here/idle_traffic.yaml" "$quiet/app.yaml"
sed 's/input: \[20000, 0\]/input: [20000, 1]/' "$here/idle_traffic.yaml" >"$trickle/app.yaml"
with=$(idle_percent "$here/idle")
without=$(idle_percent "$empty")
after=$(idle_percent "$quiet")
kHz=$(idle_percent "$trickle")
rm -rf "$empty" "$quiet" "$trickle"
echo "idle host over ${secs} s: 1,000 idle services ${with}% of a core (target <= 1%); no service ${without}%"
echo "after 20,000 round trips across workers: ${after}% (target <= 1%); one round trip across workers every 1 ms: ${kHz}%"

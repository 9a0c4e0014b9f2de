#!/usr/bin/env bash
# Messaging at scale, each figure beside its baseline from the same run (medians of ROUNDS,
# default 3, runs interleaved): the ring of 10,000 beside the ring of 2 (same hops: what size
# costs), fan-out of 1M messages to 1,000 receivers beside the ring of 2 (a hop is one message
# sent and received), ping-pong across two workers beside the floors of a round trip across two
# libuv loop threads (bench_wake: with uv_async, as before the workers spun, and with the
# workers' spin-then-park, docs/architecture.md "Waking a worker"). The workloads are
# bench/peers/steward's (their Erlang twins run with `make bench-peers`). usage: bench/messaging.sh [BUILD_DIR] [ROUNDS]
set -euo pipefail
build=${1:-build}
rounds=${2:-3}
here=$(cd "$(dirname "$0")" && pwd)

rate() { # the rate= of the RESULT line of one run of a peers workload
  "$build/steward" run "$here/peers/steward" -x "$@" | sed -nE 's/^RESULT .*rate=([0-9.]+).*/\1/p'
}
floors() { "$build/bench_wake" "$1" | sed -nE 's/.* = ([0-9]+) round trips\/s.*/\1/p' | paste -sd' '; }
median() { tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

ring2="" ring10k="" fan="" cross="" wake="" park=""
for ((i = 0; i < rounds; i++)); do
  ring2+=" $(rate b:ring 2 1000000)"
  ring10k+=" $(rate b:ring 10000 1000000)"
  fan+=" $(rate b:fanout 1000000 1000)"
  cross+=" $(rate b:pingpong 20000 cross)"
  read -r a p <<<"$(floors 20000)"
  wake+=" $a" park+=" $p"
done
r2=$(echo "$ring2" | median) r10k=$(echo "$ring10k" | median) f=$(echo "$fan" | median)
c=$(echo "$cross" | median) w=$(echo "$wake" | median) p=$(echo "$park" | median)
awk -v r2="$r2" -v r10k="$r10k" -v f="$f" -v c="$c" -v w="$w" -v p="$p" -v n="$rounds" 'BEGIN {
  printf "messaging (medians of %d runs)\n", n
  printf "ring of 10,000, 1M hops: %.0f hops/s; ring of 2: %.0f hops/s; ratio %.2f (1: size costs nothing)\n", r10k, r2, r10k / r2
  printf "fan-out, 1M messages to 1,000 receivers: %.0f msgs/s; %.2f of a hop in the ring of 2\n", f, f / r2
  printf "ping-pong across workers: %.0f round trips/s (target >= 100000); floors between two loop threads: spin-then-park %.0f round trips/s (ratio %.3f), uv_async %.0f (ratio %.1f)\n", c, p, c / p, w, c / w
}'

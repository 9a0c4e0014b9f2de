#!/usr/bin/env bash
# Runs each peer workload in Steward and in Erlang/OTP on this machine, interleaved (Steward,
# Erlang, Steward, Erlang, ... BENCH_ROUNDS times, default 3), and prints the medians with the
# ratio Steward/Erlang as throughput (above 1: Steward is faster). See bench/peers/README.md.
# usage: bench/peers/run.sh [BUILD_DIR] [WORKLOAD...]   (default: build/, every workload)
# Skipped, with a note, when Erlang's escript is not installed.
set -euo pipefail
set -f # the commands below hold regular expressions: no globbing
build=${1:-build}
shift || true
here=$(cd "$(dirname "$0")" && pwd)
rounds=${BENCH_ROUNDS:-3}

if ! command -v escript >/dev/null 2>&1; then
  echo "bench-peers: skipped: Erlang/OTP's escript is not installed (Debian: apt-get install erlang-base)"
  exit 0
fi
for b in steward bench_runtime bench_supervisor; do
  [ -x "$build/$b" ] || { echo "bench-peers: $build/$b is missing: run make bench first" >&2; exit 1; }
done

# ---- one measurement: prints one number, or "-" when the run failed ----

# The first capture of the extended regex $1 in the output of the rest of the command line.
pick() {
  local re=$1 out
  shift
  out=$("$@" 2>&1) || true
  local v
  v=$(printf '%s\n' "$out" | RE=$re perl -ne 'if (/$ENV{RE}/) { print "$1\n"; exit }')
  if [ -z "$v" ]; then
    printf '%s\n' "$out" | tail -3 | sed 's/^/  bench-peers: /' >&2
    v=-
  fi
  echo "$v"
}

stw() { pick "$1" "$build/steward" run "$here/steward" -x "${@:2}"; }
otp() { pick "$1" escript "$here/erlang/$2.escript" "${@:3}"; }
spawns() { pick "$1" env BENCH_NO_PREEMPT=1 "$build/bench_runtime" 0 "$2"; }
sup() { pick "$1" "$build/bench_supervisor" "${@:2}"; }

RATE='rate=([0-9.]+)'
sup_up() { sup 'all running in ([0-9.]+) ms' 0 0 "$1"; }
sup_down() { sup 'shutdown ([0-9.]+) ms' 0 0 "$1"; }
sup_restarts() { sup '= ([0-9.]+) restarts/s' "$1" 0 0; }

# ---- the workloads: name | what is measured | better (high: a rate, low: a cost) | Steward
# ---- command | Erlang command ("" when Erlang has no twin); stw and otp take the regular
# ---- expression whose capture is the figure, then the entry or script and its arguments ----
workloads=(
  "pingpong|ping-pong, same worker (round trips/s)|high|stw $RATE b:pingpong 300000 same|otp $RATE pingpong 300000"
  "pingpong_cross|ping-pong, across workers (round trips/s)|high|stw $RATE b:pingpong 30000 cross|"
  "pairs|2 ping-pong pairs at once (round trips/s, total)|high|stw $RATE b:pairs 200000 2|otp $RATE pairs 200000 2"
  "spawn10k|spawn, 10k processes (us each)|low|spawns_us 10000|otp us=([0-9.]+) spawn 10000"
  "spawn100k|spawn, 100k processes (us each)|low|spawns_us 100000|otp us=([0-9.]+) spawn 100000"
  "rss|bytes per idle process (100k)|low|spawns_bytes 100000|otp rss_bytes=([0-9.]+) spawn 100000"
  "ring2|ring of 2, 1M hops (hops/s)|high|stw $RATE b:ring 2 1000000|otp $RATE ring 2 1000000"
  "ring10k|ring of 10,000, 1M hops (hops/s)|high|stw $RATE b:ring 10000 1000000|otp $RATE ring 10000 1000000"
  "fanout|fan-out, 1M messages to 1,000 (msgs/s)|high|stw $RATE b:fanout 1000000 1000|otp $RATE fanout 1000000 1000"
  "restarts10k|restarts/s over 10,000 restarts|high|sup_restarts 10000|otp $RATE restarts 10000"
  "restarts100k|restarts/s over 100,000 restarts|high|sup_restarts 100000|otp $RATE restarts 100000"
  "start10k|cold start, 10k services (ms)|low|sup_up 10000|otp start_ms=([0-9.]+) coldstart 10000"
  "stop10k|shutdown, 10k services (ms)|low|sup_down 10000|otp shutdown_ms=([0-9.]+) coldstart 10000"
  "start100k|cold start, 100k services (ms)|low|sup_up 100000|otp start_ms=([0-9.]+) coldstart 100000"
  "stop100k|shutdown, 100k services (ms)|low|sup_down 100000|otp shutdown_ms=([0-9.]+) coldstart 100000"
)

spawns_us() {
  local r
  r=$(spawns '= ([0-9.]+) spawns/s' "$1")
  [ "$r" = - ] && echo - || awk -v r="$r" 'BEGIN { printf "%.2f", 1e6 / r }'
}
spawns_bytes() {
  local kb
  kb=$(spawns '= ([0-9.]+) KB per idle process' "$1")
  [ "$kb" = - ] && echo - || awk -v k="$kb" 'BEGIN { printf "%.0f", k * 1024 }'
}

median() { tr ' ' '\n' | grep -v '^-\?$' | sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)]; else print "-" }'; }

# A number for people: 1.94M, 912k, 27.4.
human() {
  awk -v v="$1" 'BEGIN {
    if (v == "-") { print "-"; exit }
    if (v >= 1e6) printf "%.2fM", v / 1e6; else if (v >= 1e4) printf "%.0fk", v / 1e3;
    else if (v >= 100) printf "%.0f", v; else printf "%.2f", v }'
}

# Steward/Erlang as throughput: s/e for a rate, e/s for a cost; below 1 also as 1/x.
ratio() {
  awk -v s="$1" -v e="$2" -v better="$3" 'BEGIN {
    if (s == "-" || e == "-" || s == 0 || e == 0) { print "-"; exit }
    r = better == "high" ? s / e : e / s
    if (r < 1) printf "%.2f (1/%.1f)", r, 1 / r; else printf "%.2f", r }'
}

selected=" $* "
want() { [ "$selected" = "  " ] || [[ "$selected" == *" $1 "* ]]; } # all when none named

echo "bench-peers: $rounds rounds, Steward and Erlang/OTP interleaved; $(nproc) cores," \
  "load $(cut -d' ' -f1-3 /proc/loadavg); $(erl -noshell -eval 'io:format("OTP ~s", [erlang:system_info(otp_release)]), halt().' 2>/dev/null)"
printf '%-46s %12s %12s   %s\n' "workload (medians)" "Steward" "Erlang/OTP" "Steward/Erlang"
for w in "${workloads[@]}"; do
  IFS='|' read -r name label better scmd ecmd <<<"$w"
  want "$name" || continue
  s_vals="" e_vals=""
  for ((i = 0; i < rounds; i++)); do
    s_vals+=" $($scmd)"
    [ -n "$ecmd" ] && e_vals+=" $($ecmd)"
  done
  s=$(echo "$s_vals" | median)
  e=-
  [ -n "$ecmd" ] && e=$(echo "$e_vals" | median)
  printf '%-46s %12s %12s   %s\n' "$label" "$(human "$s")" "$(human "$e")" "$(ratio "$s" "$e" "$better")"
  [ -n "${BENCH_VERBOSE:-}" ] && echo "  runs: Steward$s_vals; Erlang$e_vals"
done
echo "load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"

#!/usr/bin/env bash
# Runs the registry fuzzer for N seconds from the seed corpus (spec/fuzz/seed plus every YAML
# file under examples/ and spec/corpus/). Fails on any crash, leak, timeout or sanitizer report.
set -euo pipefail
fuzzer=$1
seconds=${2:-60}
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/corpus"
cp "$root"/spec/fuzz/seed/* "$work/corpus/" 2>/dev/null || true
i=0
while IFS= read -r -d '' f; do
  cp "$f" "$work/corpus/seed-$i.yaml"
  i=$((i + 1))
done < <(find "$root/examples" "$root/spec/corpus" -name '*.yaml' -print0 2>/dev/null)
echo "fuzz: $(ls "$work/corpus" | wc -l) seeds, ${seconds}s"
"$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
  -dict="$root/spec/fuzz/yaml.dict" -artifact_prefix="$work/" -print_final_stats=1 "$work/corpus" 2>"$work/log" || {
  tail -n 60 "$work/log"
  for a in "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-*; do
    [ -e "$a" ] && { echo "artifact: $a"; base64 "$a" | head -c 4000; echo; }
  done
  echo "fuzz: FAILED"
  exit 1
}
grep -E "^stat::number_of_executed_units|^stat::peak_rss_mb" "$work/log" || true
echo "fuzz: ok, no crashes"

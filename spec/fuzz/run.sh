#!/usr/bin/env bash
# Runs fuzzers one after another, each for its share of SECONDS:
#   run.sh BUILD_DIR SECONDS NAME...     (BUILD_DIR/fuzz_NAME, built by the target `fuzzers`)
# Each starts from spec/fuzz/seed/NAME/ (if any; the registry fuzzer also from every YAML file
# under examples/ and spec/corpus/) with spec/fuzz/NAME.dict (if any). Every fuzzer runs even
# when an earlier one failed; any crash, leak, timeout or sanitizer report fails the script.
set -euo pipefail
build=$1
seconds=$2
shift 2
[ $# -gt 0 ] || { echo "usage: run.sh BUILD_DIR SECONDS NAME..." >&2; exit 2; }
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
share=$(( seconds / $# ))
[ "$share" -ge 1 ] || share=1

# Fills $2 with the seeds of fuzzer $1.
seeds() {
  mkdir -p "$2"
  cp "$root/spec/fuzz/seed/$1"/* "$2/" 2>/dev/null || true
  if [ "$1" = registry ]; then
    local i=0 f
    while IFS= read -r -d '' f; do
      cp "$f" "$2/seed-$i.yaml"
      i=$((i + 1))
    done < <(find "$root/examples" "$root/spec/corpus" -name '*.yaml' -print0 2>/dev/null)
  fi
}

failed=()
for name in "$@"; do
  fuzzer=$build/fuzz_$name
  dir=$work/$name
  seeds "$name" "$dir/corpus"
  dict=()
  [ -f "$root/spec/fuzz/$name.dict" ] && dict=(-dict="$root/spec/fuzz/$name.dict")
  echo "fuzz $name: $(ls "$dir/corpus" | wc -l) seeds, ${share}s"
  if "$fuzzer" -max_total_time="$share" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
      "${dict[@]}" -artifact_prefix="$dir/" -print_final_stats=1 "$dir/corpus" 2>"$dir/log"; then
    grep -E "^stat::number_of_executed_units|^stat::peak_rss_mb" "$dir/log" || true
    echo "fuzz $name: ok, no crashes"
  else
    tail -n 60 "$dir/log"
    for a in "$dir"/crash-* "$dir"/leak-* "$dir"/timeout-* "$dir"/oom-*; do
      [ -e "$a" ] && { echo "artifact: $a"; base64 "$a" | head -c 4000; echo; }
    done
    echo "fuzz $name: FAILED"
    failed+=("$name")
  fi
done
[ ${#failed[@]} -eq 0 ] || { echo "fuzz: FAILED: ${failed[*]}"; exit 1; }
echo "fuzz: ok ($*)"

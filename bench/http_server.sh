#!/usr/bin/env bash
# The HTTP server beside nginx + Lua (OpenResty's content_by_lua_block) in the same run
# (bench/http_server/): a hello-world endpoint over keep-alive (wrk -t1 -c50: requests/s and
# p99 for both), a JSON endpoint asking a state service per request, the same hello world
# behind a bearer token (`auth`) beside it without, and the host's RSS with
# 10,000 idle keep-alive connections. Needs wrk, nginx and libnginx-mod-http-lua
# (scripts/install-deps.sh bench); skipped with a note when they are missing.
# Usage: bench/http_server.sh [STEWARD] [SECONDS]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
steward=${1:-$here/../build/steward}
secs=${2:-5}
lua_module=/usr/lib/nginx/modules/ngx_http_lua_module.so
for tool in wrk nginx python3; do
  if ! command -v "$tool" >/dev/null; then
    echo "skipped: $tool is missing (bash scripts/install-deps.sh bench)"; exit 0
  fi
done
if [ ! -e "$lua_module" ]; then
  echo "skipped: $lua_module is missing (bash scripts/install-deps.sh bench)"; exit 0
fi

work=$(mktemp -d)
app=$work/app
cp -r "$here/http_server" "$app"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

# ---- steward ----
ulimit -n 65536 2>/dev/null || true
"$steward" run "$app" >"$work/steward.log" 2>&1 &
spid=$!
pids+=("$spid")
for _ in $(seq 200); do grep -q "listening" "$work/steward.log" && break; sleep 0.05; done
port=$(grep -o 'listening  address=tcp://127.0.0.1:[0-9]*' "$work/steward.log" | grep -o '[0-9]*$')
[ -n "$port" ] || { echo "steward did not start:"; cat "$work/steward.log"; exit 1; }

# ---- nginx with the Lua module, one worker, the same body ----
nport=$((port + 1))
while (exec 3<>/dev/tcp/127.0.0.1/$nport) 2>/dev/null; do nport=$((nport + 1)); done
mkdir -p "$work/nginx"
cat >"$work/nginx/nginx.conf" <<CONF
load_module /usr/lib/nginx/modules/ndk_http_module.so;
load_module $lua_module;
worker_processes 1;
daemon off;
error_log $work/nginx/error.log;
pid $work/nginx/nginx.pid;
events { worker_connections 20000; }
http {
  access_log off;
  server {
    listen 127.0.0.1:$nport;
    location /hello { content_by_lua_block { ngx.header.content_type = "text/plain"; ngx.print("Hello, World!") } }
  }
}
CONF
nginx -c "$work/nginx/nginx.conf" -p "$work/nginx" 2>"$work/nginx/stderr" &
pids+=("$!")
for _ in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/$nport) 2>/dev/null && break; sleep 0.05; done

# wrk's figures: "REQ_PER_S P99" (p99 in ms)
run_wrk() {
  local out
  out=$(wrk -t1 -c50 -d"${secs}s" --latency "$@")
  local rps p99
  rps=$(echo "$out" | awk '/Requests\/sec/ {print $2}')
  p99=$(echo "$out" | awk '$1 == "99%" {v = $2; if (v ~ /us$/) {sub(/us/, "", v); v = v / 1000} else if (v ~ /ms$/) {sub(/ms/, "", v)} else if (v ~ /s$/) {sub(/s/, "", v); v = v * 1000}; print v}')
  echo "$rps $p99"
}

wrk -t1 -c50 -d1s "http://127.0.0.1:$port/hello" >/dev/null # warm up both
wrk -t1 -c50 -d1s "http://127.0.0.1:$nport/hello" >/dev/null
read -r s_rps s_p99 <<<"$(run_wrk "http://127.0.0.1:$port/hello")"
read -r n_rps n_p99 <<<"$(run_wrk "http://127.0.0.1:$nport/hello")"
printf 'hello world, keep-alive, wrk -t1 -c50 -d%ss:\n' "$secs"
printf '  steward: %8.0f req/s  p99 %6.2f ms\n' "$s_rps" "$s_p99"
printf '  nginx+lua: %6.0f req/s  p99 %6.2f ms\n' "$n_rps" "$n_p99"
awk -v a="$s_rps" -v b="$n_rps" -v c="$s_p99" -v d="$n_p99" \
  'BEGIN { printf "  ratio: %.2fx the requests/s (target >= 0.5), %.2fx the p99 (target <= 2)\n", a / b, c / d }'

read -r j_rps j_p99 <<<"$(run_wrk "http://127.0.0.1:$port/json")"
printf 'JSON endpoint asking a state service per request: %.0f req/s  p99 %.2f ms (%.2fx hello world)\n' \
  "$j_rps" "$j_p99" "$(awk -v a="$j_rps" -v b="$s_rps" 'BEGIN { print a / b }')"

# ---- authenticated requests: the same hello world behind a bearer token, and refused ones ----
token=$(python3 -c 'import sys, urllib.request as u; print(u.urlopen(u.Request(sys.argv[1], data=b"", method="POST")).read().decode())' \
  "http://127.0.0.1:$port/mint")
# alternated, three rounds each, the best round of each kept: the machine's load moves
a_rps=0 h_rps=0
for _ in 1 2 3; do
  read -r rps p99 <<<"$(run_wrk "http://127.0.0.1:$port/secure/hello" -H "Authorization: Bearer $token")"
  awk -v a="$rps" -v b="$a_rps" 'BEGIN { exit !(a > b) }' && a_rps=$rps a_p99=$p99
  read -r rps p99 <<<"$(run_wrk "http://127.0.0.1:$port/hello")"
  awk -v a="$rps" -v b="$h_rps" 'BEGIN { exit !(a > b) }' && h_rps=$rps h_p99=$p99
done
read -r r_rps r_p99 <<<"$(run_wrk "http://127.0.0.1:$port/secure/hello" -H "Authorization: Bearer ${token//?/A}")"
printf 'hello world behind a bearer token (validated in C, the handler runs as its identity), best of 3 rounds alternated:\n'
printf '  with a token: %8.0f req/s  p99 %6.2f ms\n' "$a_rps" "$a_p99"
printf '  no auth:      %8.0f req/s  p99 %6.2f ms (the same endpoint without auth)\n' "$h_rps" "$h_p99"
awk -v a="$a_rps" -v b="$h_rps" 'BEGIN { printf "  ratio: %.2fx the requests/s of the unauthenticated endpoint (%.2f us more per request)\n", a / b, (1e6 / a - 1e6 / b) }'
printf '  invalid token, 401 before any Lua: %.0f req/s  p99 %.2f ms\n' "$r_rps" "$r_p99"

# ---- RSS with 10,000 idle keep-alive connections ----
rss() { awk '/VmRSS/ {print $2}' "/proc/$spid/status"; }
n=10000
python3 "$here/http_server/hold.py" 127.0.0.1 "$port" 1000 </dev/null >/dev/null 2>&1 # warm up
sleep 0.5
before=$(rss)
exec 4> >(python3 "$here/http_server/hold.py" 127.0.0.1 "$port" "$n" >"$work/hold.out")
for _ in $(seq 600); do grep -q held "$work/hold.out" 2>/dev/null && break; sleep 0.1; done
sleep 0.5
after=$(rss)
held=$(awk '{print $2}' "$work/hold.out")
exec 4>&-
printf 'RSS with %s idle keep-alive connections (%s answered): %s KB -> %s KB, %.2f KB each (target <= 4)\n' \
  "$n" "$held" "$before" "$after" "$(awk -v a="$after" -v b="$before" -v n="$n" 'BEGIN { print (a - b) / n }')"

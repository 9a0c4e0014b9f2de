#!/usr/bin/env bash
# Installs the Debian packages Steward needs, by purpose:
#   run     build and run steward (the default of `make run`)
#   test    run + the test runners (`make test`)
#   fuzz    test + clang and its fuzzing runtime (`make fuzz`)
#   format  clang-format (`make check-format`)
#   all     everything CI uses (the default)
#   bench   what the benchmarks compare against (wrk, nginx with its Lua module, Erlang):
#           not needed to build or test, so not in `all`
# Idempotent: installs only what is missing, so a second run is a quick no-op.
set -euo pipefail

# LuaJIT is Debian's luajit2, the OpenResty-maintained branch: newer fixes than the luajit
# package's 2.1.0~beta3 snapshot, and the LuaJIT nginx's Lua module needs, so the HTTP
# benchmark's peer installs beside it (Debian's two LuaJIT packages conflict).
run=(build-essential cmake pkg-config libluajit2-5.1-dev luajit2 libuv1-dev libyaml-dev libpcre2-dev
     libjansson-dev lua-cjson-dev libcurl4-openssl-dev libhttp-parser-dev)
# `steward test`'s assertions: apps import /usr/share/lua/5.1/luassert and .../say as module
# trees (docs/operating.md "steward test"; the path is each app's library.lua source).
run+=(lua-luassert lua-say)
test=(libcmocka-dev lua-busted python3-jsonschema python3-yaml)
# Debian's Lua libraries spec/lua/modules_tree_spec.lua loads unchanged inside processes.
test+=(lua-penlight lua-uri lua-messagepack lua-markdown lua-moses)
fuzz=(clang libclang-rt-14-dev)
format=(clang-format)
bench=(wrk nginx-light libnginx-mod-http-lua erlang-base python3)

packages=()
for need in "${@:-all}"; do
  case $need in
    run) packages+=("${run[@]}") ;;
    test) packages+=("${run[@]}" "${test[@]}") ;;
    fuzz) packages+=("${run[@]}" "${test[@]}" "${fuzz[@]}") ;;
    format) packages+=("${format[@]}") ;;
    all) packages+=("${run[@]}" "${test[@]}" "${fuzz[@]}" "${format[@]}") ;;
    bench) packages+=("${bench[@]}") ;;
    *) echo "install-deps: unknown need '$need' (run, test, fuzz, format, all or bench)" >&2; exit 2 ;;
  esac
done

missing=()
for p in "${packages[@]}"; do
  # "ok installed" matches held packages ("hold ok installed") too
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all packages present (${*:-all})"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"

#!/usr/bin/env bash
# Installs what the benchmarks compare against (not needed to build or test, so not in
# install-deps.sh or CI): wrk, nginx with OpenResty's Lua module. Idempotent.
set -euo pipefail

packages=(wrk nginx-light libnginx-mod-http-lua python3)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-bench-deps: all packages present"
  exit 0
fi

echo "install-bench-deps: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"

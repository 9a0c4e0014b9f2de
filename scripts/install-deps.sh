#!/usr/bin/env bash
# Installs the Debian packages Steward builds, tests and fuzzes with. Idempotent: installs only
# what is missing, so a second run is a quick no-op.
set -euo pipefail

packages=(
  build-essential cmake pkg-config clang libclang-rt-14-dev
  libluajit-5.1-dev luajit libuv1-dev libyaml-dev libpcre2-dev libjansson-dev lua-cjson-dev
  libcurl4-openssl-dev libhttp-parser-dev
  libcmocka-dev lua-busted clang-format
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all packages present"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"

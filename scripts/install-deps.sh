#!/usr/bin/env bash
# Installs the Debian packages umkit builds and tests with, when missing.
# The CUDA toolkit itself is assumed (CUDA_HOME, default /usr/local/cuda).
set -euo pipefail
need=(libsqlite3-dev libzstd-dev libcjson-dev libcmocka-dev sqlite3 xxd zstd python3-matplotlib)
missing=()
for p in "${need[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "umkit: installing ${missing[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null

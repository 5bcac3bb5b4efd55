#!/usr/bin/env bash
# Installs GNU Octave and its MEX compiler (Debian's octave and liboctave-dev) where they are missing; quick when
# they are there. Holds a lock, so a second call waits for the first (scripts/test.sh starts one beside the C++
# steps) and then finds them installed.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p build
exec 9>build/install-octave.lock
flock 9
missing=()
for p in octave liboctave-dev; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "installing Debian packages: ${missing[*]}"
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null

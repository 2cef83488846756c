#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages verdict builds with (root or sudo). Skips apt when all are present.
set -euo pipefail
packages=(
  build-essential g++ cmake ninja-build pkg-config
  libpcre2-dev libutf8proc-dev nlohmann-json3-dev libcpp-httplib-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  clang libclang-rt-dev python3
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# Node.js and npm run the OpenAI Node SDK test (tests/node). A node that is already installed (NodeSource,
# nvm: npm comes with it) is kept; Debian's nodejs (18 in Debian 12) is enough.
command -v node >/dev/null 2>&1 || missing+=(nodejs)
command -v npm >/dev/null 2>&1 || missing+=(npm)
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "installing: ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"

#!/usr/bin/env bash
# Sets up what test/package/prebuild-arm64.test.ts needs to load the linux-arm64 prebuild on
# an x86-64 machine: qemu-user (from the host's apt sources) and an arm64 Node 20 with the
# libraries it links, unpacked into a sysroot that qemu's -L reads.
#
#   bash scripts/arm64-node-sysroot.sh [SYSROOT]
#   (default SYSROOT: $TENSORRT_NODE_ARM64_SYSROOT, else ~/.cache/tensorrt-node/arm64-sysroot)
#
# The arm64 packages come from Debian 13 (trixie), whose nodejs is 20.19 (Debian 12's is 18,
# older than the package supports). They are downloaded with a private apt configuration and
# unpacked with dpkg -x: the host's apt sources, architectures and installed packages stay as
# they were, and the sysroot carries its own glibc, so the host's glibc version does not matter.
set -euo pipefail

SYSROOT="${1:-${TENSORRT_NODE_ARM64_SYSROOT:-$HOME/.cache/tensorrt-node/arm64-sysroot}}"
SUITE="${ARM64_NODE_SUITE:-trixie}"
MIRROR="${ARM64_NODE_MIRROR:-http://deb.debian.org/debian}"

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

if ! command -v qemu-aarch64 >/dev/null 2>&1 && ! command -v qemu-aarch64-static >/dev/null 2>&1; then
  as_root apt-get update
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y qemu-user
fi

APT_DIR="$(mktemp -d)"
trap 'rm -rf "$APT_DIR"' EXIT
mkdir -p "$APT_DIR/lists/partial" "$APT_DIR/cache/archives/partial" "$APT_DIR/debs"
echo "deb [arch=arm64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $MIRROR $SUITE main" >"$APT_DIR/sources.list"
APT_OPTS=(
  -o "Dir::Etc::SourceList=$APT_DIR/sources.list"
  -o Dir::Etc::SourceParts=/dev/null
  -o "Dir::State::Lists=$APT_DIR/lists"
  -o "Dir::Cache=$APT_DIR/cache"
  -o Dir::State::status=/dev/null
  -o APT::Architecture=arm64
  -o APT::Architectures=arm64
  # The downloads land in this private temporary folder, which apt's unprivileged _apt user
  # cannot enter; apt would fall back to root with a warning anyway.
  -o APT::Sandbox::User=root
)
apt-get "${APT_OPTS[@]}" update

# nodejs and everything it depends on, recursively (no recommends: npm is not needed).
mapfile -t PACKAGES < <(apt-cache "${APT_OPTS[@]}" depends --recurse --no-recommends --no-suggests \
  --no-conflicts --no-breaks --no-replaces --no-enhances nodejs | grep -v '^[ <]' | sort -u)
echo "arm64 packages: ${PACKAGES[*]}"
(cd "$APT_DIR/debs" && apt-get "${APT_OPTS[@]}" download "${PACKAGES[@]}")

rm -rf "$SYSROOT"
mkdir -p "$SYSROOT"
for deb in "$APT_DIR"/debs/*.deb; do dpkg -x "$deb" "$SYSROOT"; done
# Debian 13 is merged-/usr: the dynamic loader that node names, /lib/ld-linux-aarch64.so.1,
# lives in usr/lib, and the links from / that base-files would make are not in these packages.
for dir in lib bin sbin; do [ -e "$SYSROOT/$dir" ] || ln -s "usr/$dir" "$SYSROOT/$dir"; done

QEMU="$(command -v qemu-aarch64 || command -v qemu-aarch64-static)"
VERSION="$("$QEMU" -L "$SYSROOT" "$SYSROOT/usr/bin/node" -p 'process.arch + " node " + process.version')"
echo "$VERSION in $SYSROOT"

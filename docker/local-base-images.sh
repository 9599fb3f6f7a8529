#!/usr/bin/env bash
# Build local stand-ins for the standard base images koth's Dockerfiles and
# docker-compose.yml name, on a machine with a Docker engine but no image
# registry (as CI's). With a registry, `docker pull` does this job and this
# script is not needed. Each image is built only when its tag is missing
# (--force rebuilds them all):
#   debian:bookworm-slim   debootstrap (languages/local-base-image.sh)
#   rust:1-bookworm        Debian + a C toolchain + this machine's Rust toolchain
#                          (and its extra CA certificates, for cargo behind a TLS proxy)
#   postgres:15-bookworm   Debian's PostgreSQL 15 + an entry point for the official variables
set -euo pipefail
cd "$(dirname "$0")/.."
force="${1:-}"
missing() { [ "$force" = --force ] || ! docker image inspect "$1" >/dev/null 2>&1; }

bash languages/local-base-image.sh $force

if missing rust:1-bookworm; then
    sysroot=$(rustc --print sysroot)
    ctx=$(mktemp -d /var/tmp/koth-rust-image.XXXXXX)
    trap 'rm -rf "$ctx"' EXIT
    cp docker/standins/rust/Dockerfile "$ctx/"
    # The machine's extra CAs (a TLS-intercepting network's), if any.
    mkdir "$ctx/extra-ca"
    cp /usr/local/share/ca-certificates/*.crt "$ctx/extra-ca/" 2>/dev/null || true
    mkdir "$ctx/toolchain"
    # The compiler and standard library; not the documentation.
    tar -C "$sysroot" --exclude=./share/doc --exclude=./lib/rustlib/src -c . | tar -C "$ctx/toolchain" -x
    echo "rust:1-bookworm from Debian and $(rustc --version)"
    docker build -q -t rust:1-bookworm "$ctx"
fi

if missing postgres:15-bookworm; then
    echo "postgres:15-bookworm from Debian's postgresql-15"
    docker build -q -t postgres:15-bookworm docker/standins/postgres
fi

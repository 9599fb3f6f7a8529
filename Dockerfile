# koth's images, built from this repository on standard base images:
# rust:1-bookworm to compile, debian:bookworm-slim to run. One binary, `koth`,
# serves every role (web, scheduler, runner). docker-compose.yml uses the
# targets below; `docker build --target koth -t koth .` builds the main one.
# (Plain Dockerfile syntax, no BuildKit features: docker-compose v1 and the
# classic builder build it too.)

FROM rust:1-bookworm AS build
WORKDIR /src
# No debug information: the binary is stripped of it below anyway (its
# symbols stay), and the build's layers are a gigabyte smaller without it.
ENV CARGO_PROFILE_RELEASE_DEBUG=0
# KOTH_PREBUILT=1: take `koth` from target/prebuilt/koth in the build context,
# built beforehand on Debian 12 (as these images are), instead of compiling
# it here. CI does (.ci/run): its tests have just built koth, and compiling
# it again in release here took 20 of its 90 minutes. Hosts leave it empty.
ARG KOTH_PREBUILT=
# Dependencies first, against stub crates, in a layer of their own: a change
# to koth's sources rebuilds koth, not its few hundred dependencies.
COPY Cargo.toml Cargo.lock ./
COPY sandbox/Cargo.toml sandbox/
COPY games/Cargo.toml games/
COPY runner/Cargo.toml runner/
COPY ladder/Cargo.toml ladder/
COPY scheduler/Cargo.toml scheduler/
COPY web/Cargo.toml web/
COPY testkit/Cargo.toml testkit/
RUN for crate in sandbox games runner ladder scheduler web testkit; do mkdir -p $crate/src && touch $crate/src/lib.rs; done \
 && mkdir -p src && echo 'fn main() {}' > src/main.rs \
 && if [ -z "$KOTH_PREBUILT" ]; then cargo build --release --locked; fi \
 && cargo test --locked -p koth-sandbox --no-run \
 && rm -rf src sandbox/src games/src runner/src ladder/src scheduler/src web/src testkit/src
COPY . .
# COPY keeps the files' times, older than the stubs' builds: touch them.
RUN find src sandbox games runner ladder scheduler web testkit -name '*.rs' -exec touch {} + \
 && if [ -n "$KOTH_PREBUILT" ]; then cp target/prebuilt/koth /usr/local/bin/koth; \
    else cargo build --release --locked --bin koth && cp target/release/koth /usr/local/bin/koth; fi \
 && cargo test --locked -p koth-sandbox --test hostile --no-run --message-format=json \
    | sed -n 's/.*"executable":"\([^"]*hostile-[^"]*\)".*/\1/p' | xargs -I{} cp {} /usr/local/bin/koth-hostile-tests \
 && rm -rf target
# Keep the symbols (backtraces name functions), drop any debug information.
RUN strip --strip-debug /usr/local/bin/koth

# The runtime: web, scheduler and runner. It needs nothing but the binary
# and the kernel: bots are compiled and run on the language images'
# filesystems (the image store volume), never on this one; PostgreSQL is
# reached without TLS on the compose network, and the CLI client carries
# its own TLS roots.
FROM debian:bookworm-slim AS koth
COPY --from=build /usr/local/bin/koth /usr/local/bin/koth
COPY docker/entrypoint.sh /usr/local/bin/koth-entrypoint
ENTRYPOINT ["koth-entrypoint"]
CMD ["koth", "--help"]

# The one-shot builder of the language images (`koth languages build`): the
# runtime plus Docker's client, which talks to the host's engine through its
# socket. Only this service gets the socket; runners never do.
FROM koth AS images
RUN apt-get update \
 && apt-get install -y --no-install-recommends docker.io \
 && rm -rf /var/lib/apt/lists/*

# The sandbox's hostile-program suite, to run in a container with exactly the
# runner's privileges (`docker-compose --profile check run --rm sandbox-check`):
# proof that the sandbox holds inside the container, on this host. It needs a
# C compiler and Python to build and run its hostile programs.
FROM koth AS sandbox-check
RUN apt-get update \
 && apt-get install -y --no-install-recommends gcc libc6-dev python3 procps \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /usr/local/bin/koth-hostile-tests /usr/local/bin/koth-hostile-tests
COPY sandbox/tests/programs /src/sandbox/tests/programs
ENV CI=true
CMD ["koth-hostile-tests", "--test-threads=2"]

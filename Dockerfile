# chainetl as a container image (the one the README's Kubernetes example runs):
#
#   docker build -t chainetl:0.2.0 .
#   docker run --rm chainetl:0.2.0 validate /specs/job.toml   # with -v ./specs:/specs
#
# Stage 1 builds the release binary exactly as `make build` does (the
# crash-test tool is an example target, which `cargo build` never builds).
# Stage 2 is a slim runtime with CA certificates for HTTPS and S3, running as
# an unprivileged user. The image has no .git: to name the commit in
# `chainetl --version`, add `--build-arg CHAINETL_BUILD_COMMIT=$(git rev-parse HEAD)`.

FROM rust:1.90-slim-bookworm AS build
# make: jemalloc. ring (TLS and S3 signing) and zstd need only the C compiler.
RUN apt-get update \
 && apt-get install -y --no-install-recommends make \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
ARG CHAINETL_BUILD_COMMIT=
COPY Cargo.toml Cargo.lock build.rs ./
COPY src ./src
COPY vendor ./vendor
COPY schemas ./schemas
COPY tests ./tests
RUN cargo build --release --locked --bin chainetl \
 && strip target/release/chainetl

FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --home-dir /work --create-home chainetl
COPY --from=build /src/target/release/chainetl /usr/local/bin/chainetl
USER 10001:10001
WORKDIR /work
ENTRYPOINT ["chainetl"]
CMD ["--help"]

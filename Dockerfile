# chainetl as a container image (the one the README's Kubernetes example runs):
#
#   docker build -t chainetl:0.1.0 .
#   docker run --rm chainetl:0.1.0 validate /specs/job.toml   # with -v ./specs:/specs
#
# Stage 1 builds the release binary exactly as `make build` does (no test
# hooks: the `failpoints` feature is off). Stage 2 is a slim runtime with CA
# certificates for HTTPS and S3, running as an unprivileged user.

FROM rust:1.90-slim-bookworm AS build
# make: jemalloc; cmake, clang, perl: aws-lc (TLS for the S3 client).
RUN apt-get update \
 && apt-get install -y --no-install-recommends make cmake clang perl pkg-config \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY Cargo.toml Cargo.lock ./
COPY src ./src
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

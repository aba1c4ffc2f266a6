# chainetl — developer targets. `make demo` and `make test` are the README's two set-up commands.
SHELL := /bin/bash
CARGO ?= cargo
VENV ?= .venv
PY := $(VENV)/bin/python
BIN := target/release/chainetl

.PHONY: build demo test test-long lint audit bench bench-smoke clean

build:
	$(CARGO) build --release

# Runs pipelines/demo.toml on the built-in simulator (no network, no credentials)
# and prints what it wrote: rows, files and bytes per dataset and chain.
demo: build
	$(BIN) run pipelines/demo.toml --fresh
	@echo "output under out/demo — try: duckdb -c \"select chain, count(*) from read_parquet('out/demo/events/**/*.parquet', hive_partitioning = true) group by 1\""

$(PY): requirements-dev.txt
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --disable-pip-version-check -r requirements-dev.txt
	@touch $(PY)

# Unit and integration tests (release profile: the test build reuses every
# dependency `make build` built; scripts/check-build-reuse keeps it so).
# The Python tools, and Chromium where it is missing, install while the
# tests compile; the integration suite starts as soon as its binary is
# built and they are installed, while cargo still builds the unit tests
# (scripts/run-tests). The Spark checks need Java, which scripts/need-java
# finds or installs (or names, and stops); the report page's checks need
# Chromium, which scripts/need-chromium does the same for.
test:
	@scripts/need-java
	@rc=$$(mktemp -d); trap 'rm -rf "$$rc"' EXIT; \
	{ scripts/need-chromium >/dev/null; echo $$? > "$$rc/chromium.rc"; } & \
	{ $(MAKE) --no-print-directory $(PY); echo $$? > "$$rc/venv.rc"; } & \
	CARGO=$(CARGO) CHAINETL_PYTHON=$(abspath $(PY)) RC_DIR="$$rc" WAIT="venv chromium" scripts/run-tests; \
	code=$$?; wait; exit $$code

# Long random runs, after `make test` (CI runs both): the model test's many
# seeds (MODEL_CASES random jobs and sequences of changes) and the unit
# tests' properties at PROPTEST_CASES cases each.
MODEL_CASES ?= 150
PROPTEST_CASES ?= 20000
test-long:
	@$(MAKE) --no-print-directory $(PY)
	$(CARGO) test --release --no-run
	CHAINETL_PROPTEST_CASES=$(PROPTEST_CASES) $(CARGO) test --release --lib
	CHAINETL_PYTHON=$(abspath $(PY)) CHAINETL_MODEL_CASES=$(MODEL_CASES) $(CARGO) test --release --test it -- --ignored --exact model::model_long

lint:
	$(CARGO) fmt --check
	$(CARGO) clippy --release --all-targets -- -D warnings
	scripts/check-build-reuse

# RustSec advisories, offline against ../shared/advisory-db (needs `cargo install cargo-audit`).
audit:
	$(CARGO) audit --db ../shared/advisory-db --no-fetch

bench: build $(PY)
	CHAINETL_PYTHON=$(abspath $(PY)) bash benches/run.sh full

bench-smoke: build $(PY)
	CHAINETL_PYTHON=$(abspath $(PY)) bash benches/run.sh smoke

clean:
	$(CARGO) clean
	rm -rf out $(VENV)

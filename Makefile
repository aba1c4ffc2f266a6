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

# The Python tools of the read-back checks, installed with uv, several
# times quicker than pip from an empty cache (docs/testing.md). pyspark,
# whose install builds a wheel of its jars, has a target of its own:
# `make test` starts the suite without it, and the Spark checks wait for it.
UV_VERSION := 0.13.9
SPARK := $(VENV)/.spark-installed
$(PY): requirements-dev.txt
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --disable-pip-version-check uv==$(UV_VERSION)
	$(VENV)/bin/uv pip install --quiet --python $(PY) -r requirements-dev.txt
	@touch $(PY)

$(SPARK): requirements-spark.txt $(PY)
	$(VENV)/bin/uv pip install --quiet --python $(PY) -r requirements-spark.txt
	@touch $(SPARK)

# Unit and integration tests: the tool under test is the release build
# (`make build`), and the tests' own code is built against it
# (scripts/run-tests says how; scripts/check-build-reuse keeps the two
# builds' dependencies one). The Python tools and Chromium, where it is
# missing, install while the tests compile (set-up jobs, each writing its
# exit code into NAME.rc). The integration suite starts as soon as its
# binary is built and the Python tools but pyspark are installed; the
# Spark checks wait for pyspark and the report page's checks for
# Chromium (`set_up` in tests/it/common.rs). The Spark checks need Java,
# which scripts/need-java finds or installs (or names, and stops);
# scripts/need-chromium does the same for Chromium.
test:
	@scripts/need-java
	@rc=$$(mktemp -d); trap 'rm -rf "$$rc"' EXIT; \
	ended() { echo "$$2" > "$$rc/$$1.tmp" && mv "$$rc/$$1.tmp" "$$rc/$$1.rc"; }; \
	{ scripts/need-chromium >/dev/null; ended chromium $$?; } & \
	{ $(MAKE) --no-print-directory $(PY); c=$$?; ended venv $$c; \
	  [ $$c = 0 ] && $(MAKE) --no-print-directory $(SPARK); ended spark $$?; } & \
	CARGO=$(CARGO) CHAINETL_PYTHON=$(abspath $(PY)) RC_DIR="$$rc" WAIT="venv" LATE="spark chromium" scripts/run-tests; \
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

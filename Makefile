# pg_mln: the commands users type.
#
#   make demo    build, install the extension, start
#                the private cluster and run the bundled example
#   make check   the same set-up, then every test suite (GoogleTest via ctest,
#                pgTAP via pg_prove, end-to-end); exits non-zero on failure
#   make test-unit   the GoogleTest cases alone, in parallel (ctest -j, one ctest
#                entry per case; labels gpu, lang, ground, solver, needs_gpu)
#   make test-slow   the full-size statistical tests that check leaves out
#                (ctest -L slow; check runs a reduced version of each)
#   make deps    install the Debian packages that are missing (apt-get);
#                build, install and check only say what is missing
#   make build | install | cluster-start | cluster-stop | bench | clean
#
# Both demo and check are idempotent: a second run skips what is done.
# Builds are quiet (progress and results; the compiler lines go to
# build/build.log); V=1 shows everything.

BUILD       ?= build/cmake
JOBS        ?= $(shell nproc)
PG_CONFIG   ?= pg_config
CMAKE_FLAGS ?=

.PHONY: all deps deps-check build install cluster-start cluster-stop demo check test-unit test-slow test-sql test-e2e bench clean

all: build

deps:
	@bash scripts/deps.sh install

deps-check:
	@bash scripts/deps.sh check

build: deps-check
	@bash scripts/build.sh $(BUILD) $(JOBS) $(PG_CONFIG) -- $(CMAKE_FLAGS)

install: deps-check
	@bash scripts/build.sh $(BUILD) $(JOBS) $(PG_CONFIG) install -- $(CMAKE_FLAGS)

cluster-start:
	@bash scripts/cluster.sh start

cluster-stop:
	@bash scripts/cluster.sh stop

demo: install cluster-start
	@bash scripts/demo.sh

check: install cluster-start
	@bash scripts/check.sh $(BUILD)

test-unit: build
	@bash scripts/check.sh $(BUILD) unit

test-slow: build
	@cd $(BUILD) && ctest --output-on-failure -j$(JOBS) -L slow

test-sql: install cluster-start
	@bash scripts/check.sh $(BUILD) sql

test-e2e: install cluster-start
	@bash scripts/check.sh $(BUILD) e2e

bench: install cluster-start
	@bash bench/run.sh $(BUILD)

clean:
	-@bash scripts/cluster.sh stop
	-@$(MAKE) -s -f Makefile.pgxs BUILD=$(BUILD) clean
	rm -rf build

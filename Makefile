# pg_mln: the commands users type.
#
#   make demo    install what is missing, build, install the extension, start
#                the private cluster and run the bundled example
#   make check   the same set-up, then every test suite (GoogleTest via ctest,
#                pgTAP via pg_prove, end-to-end); exits non-zero on failure
#   make build | install | cluster-start | cluster-stop | bench | clean
#
# Both demo and check are idempotent: a second run skips what is done.

BUILD       ?= build/cmake
JOBS        ?= $(shell nproc)
PG_CONFIG   ?= pg_config
CMAKE_FLAGS ?=
SUDO        := $(shell [ "$$(id -u)" -eq 0 ] || echo sudo)

.PHONY: all deps build install cluster-start cluster-stop demo check test-unit test-sql test-e2e bench clean

all: build

deps:
	@bash scripts/deps.sh

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_FLAGS)

build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j$(JOBS)
	$(MAKE) -f Makefile.pgxs BUILD=$(BUILD) PG_CONFIG=$(PG_CONFIG) -j$(JOBS)

install: build
	$(SUDO) $(MAKE) -f Makefile.pgxs BUILD=$(BUILD) PG_CONFIG=$(PG_CONFIG) install >/dev/null
	@bash scripts/install-bin.sh $(BUILD)

cluster-start:
	@bash scripts/cluster.sh start

cluster-stop:
	@bash scripts/cluster.sh stop

demo: install cluster-start
	@bash scripts/demo.sh

check: install cluster-start
	@bash scripts/check.sh $(BUILD)

test-unit: build
	cd $(BUILD) && ctest --output-on-failure

test-sql: install cluster-start
	@bash scripts/check.sh $(BUILD) sql

test-e2e: install cluster-start
	@bash scripts/check.sh $(BUILD) e2e

bench: install cluster-start
	@bash bench/run.sh $(BUILD)

clean:
	-@bash scripts/cluster.sh stop
	-$(MAKE) -f Makefile.pgxs BUILD=$(BUILD) clean
	rm -rf build

# corral: one entry point for building, the demo and the tests.
# Targets install missing Debian packages when run as root; otherwise they
# print the exact apt-get line to run.

BUILD ?= build
JOBS  ?= $(shell nproc)
PACKAGES := cmake g++ make pkg-config libseccomp-dev libssl-dev nlohmann-json3-dev \
            libtomlplusplus-dev libcli11-dev libasio-dev libgtest-dev libgmock-dev bubblewrap util-linux python3 git mercurial perl-base diffutils bc dpkg-dev

.PHONY: all deps build demo test unit integration bench mutants package clean

all: build

deps:
	@./scripts/deps.sh $(PACKAGES)
	@./scripts/deps_mcp_sdk.sh

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCORRAL_INVARIANTS=ON >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

# Only what scripts/demo.sh runs: the corral binary (not the test suites).
demo: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCORRAL_INVARIANTS=ON >/dev/null
	@cmake --build $(BUILD) -j $(JOBS) --target corral
	@./scripts/demo.sh $(BUILD)

test: build
	@./scripts/test.sh $(BUILD)

# The Debian package (cmake/package.cmake): a Release build of what is
# installed, then build-release/corral_VERSION_ARCH.deb.
package: deps
	@cmake -S . -B build-release -DCMAKE_BUILD_TYPE=Release -DCORRAL_INVARIANTS=OFF >/dev/null
	@cmake --build build-release -j $(JOBS) --target corral corral_c
	@cd build-release && cpack -G DEB

unit: build
	@$(BUILD)/src/corral_unit_tests

bench: deps
	@cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release -DCORRAL_INVARIANTS=OFF >/dev/null
	@cmake --build build-bench -j $(JOBS) --target corral bench_spawn bench_egress bench_syscalls bench_warm bench_executor
	@./bench/run.sh build-bench 400
	@./bench/syscalls.sh build-bench 15
	@./build-bench/bench/bench_egress
	@./build-bench/bench/bench_warm 300
	@./bench/executor.sh build-bench

# Switches off one defence at a time and runs the tests that claim it
# (SECURITY.md, "Mutants"); fails when a mutant survives.
mutants: deps
	@./scripts/mutants.sh build-mutants

clean:
	rm -rf $(BUILD) build-bench build-mutants

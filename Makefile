# Thin wrapper over CMake + ctest. `make run` installs what is missing, builds and runs the
# default example; `make test` builds and runs every test.
BUILD       ?= build
ASAN_BUILD  ?= build-asan
TSAN_BUILD  ?= build-tsan
FUZZ_BUILD  ?= build-fuzz
FUZZ_SECONDS ?= 60
# Every spec/fuzz/fuzz_NAME.c (each also needs its steward_fuzzer line in CMakeLists.txt);
# `make fuzz` gives each an equal share of FUZZ_SECONDS.
FUZZERS     ?= $(patsubst spec/fuzz/fuzz_%.c,%,$(wildcard spec/fuzz/fuzz_*.c))
APP         ?= examples/hello
# A one-shot `steward run APP -x DEMO` that `make run` shows before running the app; empty for
# apps without one.
DEMO        ?= $(if $(filter examples/hello examples/hello/ examples/backup examples/backup/,$(APP)),app:demo 5,)
JOBS        ?= $(shell nproc 2>/dev/null || echo 2)
# An app may carry its host config as steward.conf (examples/backup allows exec there).
APP_CONFIG   = $(if $(wildcard $(APP)/steward.conf),--config $(APP)/steward.conf)
# The project's own builds: warnings are errors and every test runner is required (a plain
# `cmake` build, as a packager runs it, keeps warnings warnings and skips missing runners).
OWN         ?= -DSTEWARD_WERROR=ON -DSTEWARD_REQUIRE_TESTS=ON
PREFIX      ?= /usr/local

.PHONY: all deps test-deps build run test test-asan test-tsan fuzz bench install package clean format \
        check-format

all: build

# What each target needs from Debian (scripts/install-deps.sh): `make run` only what builds
# and runs steward; the tests their runners too, so none is silently skipped.
deps:
	@bash scripts/install-deps.sh run

test-deps:
	@bash scripts/install-deps.sh test

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) $(OWN) -DCMAKE_BUILD_TYPE=RelWithDebInfo

build: $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

run: deps build
	$(BUILD)/steward check $(APP)
	$(BUILD)/steward graph $(APP) --why
	$(if $(DEMO),$(BUILD)/steward run $(APP) $(APP_CONFIG) -x $(DEMO))
	@echo "== running $(APP): Ctrl-C stops it cleanly"
	$(BUILD)/steward run $(APP) $(APP_CONFIG)

test: test-deps build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

$(ASAN_BUILD)/CMakeCache.txt:
	cmake -S . -B $(ASAN_BUILD) $(OWN) -DCMAKE_BUILD_TYPE=Debug -DSTEWARD_SANITIZE=ON

test-asan: test-deps $(ASAN_BUILD)/CMakeCache.txt
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	cd $(ASAN_BUILD) && ctest --output-on-failure -j $(JOBS)

$(TSAN_BUILD)/CMakeCache.txt:
	cmake -S . -B $(TSAN_BUILD) $(OWN) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSTEWARD_TSAN=ON

test-tsan: test-deps $(TSAN_BUILD)/CMakeCache.txt
	cmake --build $(TSAN_BUILD) -j $(JOBS)
	cd $(TSAN_BUILD) && ctest --output-on-failure -j $(JOBS)

$(FUZZ_BUILD)/CMakeCache.txt:
	CC=clang cmake -S . -B $(FUZZ_BUILD) $(OWN) -DCMAKE_BUILD_TYPE=Debug -DSTEWARD_FUZZ=ON

fuzz: $(FUZZ_BUILD)/CMakeCache.txt
	@bash scripts/install-deps.sh fuzz
	cmake --build $(FUZZ_BUILD) -j $(JOBS) --target fuzzers
	bash spec/fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SECONDS) $(FUZZERS)

bench: build
	cmake --build $(BUILD) -j $(JOBS) --target benches
	bash bench/run.sh $(BUILD)

# The same workloads in Steward and in Erlang/OTP, interleaved, with ratios (bench/peers/);
# skipped with a note when Erlang (Debian erlang-base) is not installed.
.PHONY: bench-peers
bench-peers: build
	cmake --build $(BUILD) -j $(JOBS) --target benches
	bash bench/peers/run.sh $(BUILD)

# Installs into PREFIX (default /usr/local; DESTDIR works too): see docs/operating.md.
install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

# A Debian package of the tree (CPack), in $(BUILD).
package: build
	cd $(BUILD) && cpack -G DEB

format:
	@bash scripts/install-deps.sh format
	bash scripts/check-format.sh --fix

check-format:
	@bash scripts/install-deps.sh format
	bash scripts/check-format.sh

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(TSAN_BUILD) $(FUZZ_BUILD)

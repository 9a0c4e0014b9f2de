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
JOBS        ?= $(shell nproc 2>/dev/null || echo 2)

.PHONY: all deps build run test test-asan test-tsan fuzz bench clean format check-format

all: build

deps:
	@bash scripts/install-deps.sh

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo

build: $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

run: deps build
	$(BUILD)/steward check $(APP)
	$(BUILD)/steward graph $(APP) --why
	@# the demo process, for apps that have one (examples/hello's app:demo)
	@if grep -qs '^namespace: app' $(APP)/*.yaml && grep -qsE 'name: demo$$' $(APP)/*.yaml; then \
	  echo "$(BUILD)/steward run $(APP) -x app:demo 5"; $(BUILD)/steward run $(APP) -x app:demo 5; fi
	@echo "== running $(APP): Ctrl-C stops it cleanly"
	$(BUILD)/steward run $(APP)

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

$(ASAN_BUILD)/CMakeCache.txt:
	cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DSTEWARD_SANITIZE=ON

test-asan: $(ASAN_BUILD)/CMakeCache.txt
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	cd $(ASAN_BUILD) && ctest --output-on-failure -j $(JOBS)

$(TSAN_BUILD)/CMakeCache.txt:
	cmake -S . -B $(TSAN_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSTEWARD_TSAN=ON

test-tsan: $(TSAN_BUILD)/CMakeCache.txt
	cmake --build $(TSAN_BUILD) -j $(JOBS)
	cd $(TSAN_BUILD) && ctest --output-on-failure -j $(JOBS)

$(FUZZ_BUILD)/CMakeCache.txt:
	CC=clang cmake -S . -B $(FUZZ_BUILD) -DCMAKE_BUILD_TYPE=Debug -DSTEWARD_FUZZ=ON

fuzz: $(FUZZ_BUILD)/CMakeCache.txt
	cmake --build $(FUZZ_BUILD) -j $(JOBS) --target fuzzers
	bash spec/fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SECONDS) $(FUZZERS)

bench: build
	cmake --build $(BUILD) -j $(JOBS) --target benches
	bash bench/run.sh $(BUILD)

format:
	bash scripts/check-format.sh --fix

check-format:
	bash scripts/check-format.sh

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(TSAN_BUILD) $(FUZZ_BUILD)

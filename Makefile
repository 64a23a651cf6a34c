# vkml developer entry points. Every target runs scripts/setup.sh first (once; a stamp makes it
# incremental), so `make test` on a fresh Debian 12/13 machine is the whole recipe.
#   make build | test | demo | bench | opinfo | soak | wheel | docs | format | clean | distclean
#   make sanitize | tsan | fuzz   (ASan+UBSan, ThreadSanitizer, differential fuzzing; see below)
#   make windows | windows-test   (MinGW-w64 cross-build; its tests under Wine; see below)
# Knobs: BUILD_TYPE, JOBS, CTEST_ARGS, PYTEST_ARGS, PYTEST_WORKERS, BENCH_ARGS.
# GPU machines: scripts/gpu_check.sh (CONTRIBUTING.md).

SHELL       := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c

VENV       ?= .venv
PYTHON     := $(CURDIR)/$(VENV)/bin/python
BUILD      ?= build
BUILD_TYPE ?= RelWithDebInfo
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE      ?= cmake
STAMPS     := .stamps
CTEST_ARGS  ?=
PYTEST_ARGS ?=
# pytest processes (pytest-xdist): pipeline compiles and host work are single-threaded while
# lavapipe's are not, so two workers keep two cores busy.
PYTEST_WORKERS ?= 2
BENCH_ARGS  ?=
RUNTIME_BENCH_ARGS ?=

# Tests run with the Khronos validation layer on (any message fails) and the CPU fallback turned into
# an error. No driver is forced: without a GPU the Vulkan loader finds Mesa's lavapipe by itself.
TEST_ENV := VKML_VALIDATION=1 VKML_FALLBACK=error
PY_ENV   := PYTHONPATH=$(CURDIR)

CLANG_FORMAT ?= clang-format
# C++ only: GLSL would be formatted as C++, which is not worth the surprises.
FORMAT_DIRS  := src include tests torch_vkml/csrc tools bench
FORMAT_EXTS  := -name '*.cc' -o -name '*.cpp' -o -name '*.h' -o -name '*.hpp'

.PHONY: all setup examples-setup build test demo bench docs format clean distclean opinfo FORCE

all: build

# ---- setup ------------------------------------------------------------------------------------------
# Re-run when setup.sh changes or the venv is gone.
$(STAMPS)/setup: scripts/setup.sh $(if $(wildcard $(VENV)/bin/python),,FORCE)
	@bash scripts/setup.sh
	@mkdir -p $(STAMPS) && touch $@

setup: $(STAMPS)/setup

# Packages and data only the examples (and tests/torch/integration/test_examples.py) use: a separate list in setup.sh.
$(STAMPS)/examples-setup: scripts/setup.sh $(STAMPS)/setup
	@bash scripts/setup.sh --examples
	@touch $@

examples-setup: $(STAMPS)/examples-setup

# ---- build ------------------------------------------------------------------------------------------
# Configure only once; afterwards ninja re-runs cmake by itself when a CMakeLists.txt changes.
build: $(STAMPS)/setup
	@test -f CMakeLists.txt || { echo "error: no CMakeLists.txt at the repo root; nothing to build" >&2; exit 1; }
	@if [ ! -f $(BUILD)/build.ninja ]; then \
	  $(CMAKE) -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) \
	    -DPython3_EXECUTABLE=$(PYTHON); \
	fi
	@$(CMAKE) --build $(BUILD) -j$(JOBS)

# ---- test -------------------------------------------------------------------------------------------
test: build examples-setup
	@echo "== file sizes"
	@$(PYTHON) scripts/check_file_sizes.py
	@echo "== ctest"
	@$(TEST_ENV) ctest --test-dir $(BUILD) --output-on-failure --no-tests=error -j$(JOBS) $(CTEST_ARGS)
	@if [ -n "$$(find tests/torch -name 'test_*.py' 2>/dev/null | head -n1)" ]; then \
	  echo "== pytest tests/torch"; \
	  $(TEST_ENV) $(PY_ENV) $(PYTHON) -m pytest -q -n $(PYTEST_WORKERS) tests/torch $(PYTEST_ARGS); \
	else \
	  echo "== pytest: skipped (no tests/torch/test_*.py)"; \
	fi

# Long soak: the training loop of tests/torch/integration/test_soak.py for 2,000 steps (make test runs 200).
.PHONY: soak
soak: build
	@$(TEST_ENV) $(PY_ENV) VKML_SOAK_STEPS=2000 $(PYTHON) -m pytest -q tests/torch/integration/test_soak.py $(PYTEST_ARGS)

# ---- demo / bench -----------------------------------------------------------------------------------
demo: build examples-setup
	@$(BUILD)/vkml-info
	@if [ -f examples/demo.py ]; then \
	  $(PY_ENV) $(PYTHON) examples/demo.py; \
	elif [ -x $(BUILD)/bench/bench_runtime ]; then \
	  $(BUILD)/bench/bench_runtime --quick; \
	else \
	  echo "demo: neither examples/demo.py nor $(BUILD)/bench/bench_runtime exists yet"; \
	fi

# Runtime, op and model benchmarks against CUDA (or the CPU); JSON and a plot land in out/.
bench: build
	@mkdir -p out
	@$(BUILD)/bench/bench_runtime $(RUNTIME_BENCH_ARGS)
	@$(PY_ENV) $(PYTHON) bench/bench_ops.py --json out/bench_ops.json $(BENCH_ARGS)
	@$(PY_ENV) $(PYTHON) bench/bench_models.py --json out/bench_models.json $(BENCH_ARGS)
	@$(PY_ENV) $(PYTHON) bench/plot.py out/bench_ops.json out/bench_models.json -o out/performance.png

# ---- Windows: MinGW-w64 cross-build, tests under Wine ------------------------------------------------
# `make windows`: vkml-info.exe and both gtest suites in build-windows/, with warnings as errors in
# vkml's own targets. Shaders are copied from $(BUILD), not recompiled.
# `make windows-test`: runs them under Wine, whose winevulkan passes Vulkan calls to the host's
# lavapipe; Xvfb gives Wine's X11 driver, through which its Vulkan goes, a display. Validation is off
# there (Wine's vulkan-1.dll loads no layers); `make test` runs the same suites with it on.
WIN_BUILD   ?= build-windows
WIN_TESTS   := vkml-info vkml_runtime_tests vkml_ops_tests
WIN_ENV      = WINEPREFIX=$(CURDIR)/$(WIN_BUILD)/wineprefix WINEDEBUG=-all WINEDLLOVERRIDES=winemenubuilder.exe=d \
               VKML_VALIDATION=0 VKML_FALLBACK=error
.PHONY: windows windows-setup windows-test
$(STAMPS)/windows-setup: scripts/setup.sh $(STAMPS)/setup
	@bash scripts/setup.sh --windows
	@touch $@

windows-setup: $(STAMPS)/windows-setup

windows: build windows-setup
	@if [ ! -f $(WIN_BUILD)/build.ninja ]; then \
	  $(CMAKE) -S . -B $(WIN_BUILD) -G Ninja --toolchain cmake/toolchains/mingw-w64-x86_64.cmake \
	    -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) -DVKML_BUILD_PYTHON=OFF -DVKML_BUILD_BENCH=OFF \
	    -DVKML_WERROR=ON -DVKML_SHADER_REUSE_DIR=$(CURDIR)/$(BUILD)/shaders; \
	fi
	@$(CMAKE) --build $(WIN_BUILD) -j$(JOBS) --target $(WIN_TESTS)

# One Xvfb for the whole run; the op suite in two gtest shards, one per core, as in `make test`.
WIN_OPS_FILTER ?= *
windows-test: windows
	@export $(WIN_ENV); cd $(WIN_BUILD) && xvfb-run -a bash -eu -o pipefail -c '\
	  wine vkml-info.exe; \
	  wine tests/vkml_runtime_tests.exe --gtest_brief=1; \
	  VKML_DEVICE_ORDER=0,0 wine tests/vkml_runtime_tests.exe --gtest_filter="Threads*" --gtest_brief=1; \
	  ops() { GTEST_TOTAL_SHARDS=2 GTEST_SHARD_INDEX=$$1 wine tests/vkml_ops_tests.exe --gtest_brief=1 \
	          --gtest_filter="$(WIN_OPS_FILTER)" > ops_$$1.log 2>&1 || { tail -n 60 ops_$$1.log; return 1; }; }; \
	  r=0; ops 0 & s0=$$!; ops 1 || r=1; wait $$s0 || r=1; tail -n 3 ops_0.log ops_1.log; exit $$r'

# ---- housekeeping -----------------------------------------------------------------------------------
format: $(STAMPS)/setup
	@if command -v $(CLANG_FORMAT) >/dev/null; then \
	  files=$$(find $(wildcard $(FORMAT_DIRS)) -type f \( $(FORMAT_EXTS) \) 2>/dev/null); \
	  if [ -n "$$files" ]; then $(CLANG_FORMAT) -i $$files; fi; \
	else \
	  echo "format: $(CLANG_FORMAT) not found (apt-get install clang-format); C++ skipped"; \
	fi
	@$(CURDIR)/$(VENV)/bin/ruff format --quiet .

clean:
	rm -rf $(BUILD) torch_vkml/_C*.so

distclean: clean
	rm -rf $(VENV) $(STAMPS) .pytest_cache .ruff_cache

FORCE:

# docs/configuration.md from the settings registry (include/vkml/config.def); a test checks it.
docs: build
	@$(BUILD)/vkml-info --config-doc > docs/configuration.md

# Full OpInfo sweep: regenerates tests/torch/conformance/opinfo/status.json and docs/ops.md.
opinfo: build
	@$(TEST_ENV) $(PY_ENV) $(PYTHON) scripts/opinfo_sweep.py

# ---- sanitizers and fuzzing -------------------------------------------------------------------------
# The C++ core and its gtest suites under ASan+UBSan (build-asan) and TSan (build-tsan), on the same
# device as `make test`, validation on. Shaders are copied from $(BUILD), not recompiled.
# Suppressions (tests/sanitizers/*.supp) cover only third-party code, each with its reason.
# -O1 -g1: sanitizer-friendly code with line tables, at a fraction of RelWithDebInfo's compile time.
SAN_CMAKE  = $(CMAKE) -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1" \
             -DCMAKE_C_FLAGS_DEBUG="-O1 -g1" -DVKML_BUILD_PYTHON=OFF -DVKML_BUILD_BENCH=OFF \
             -DVKML_SHADER_REUSE_DIR=$(CURDIR)/$(BUILD)/shaders
ASAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
TSAN_FLAGS := -fsanitize=thread -fno-omit-frame-pointer
SAN_SUPP   := $(CURDIR)/tests/sanitizers
FUZZ_MINUTES ?= 30

.PHONY: sanitize tsan fuzz
sanitize: build
	@if [ ! -f build-asan/build.ninja ]; then \
	  $(SAN_CMAKE) -S . -B build-asan -DCMAKE_C_FLAGS="$(ASAN_FLAGS)" -DCMAKE_CXX_FLAGS="$(ASAN_FLAGS)" \
	    -DCMAKE_EXE_LINKER_FLAGS="$(ASAN_FLAGS)"; \
	fi
	@$(CMAKE) --build build-asan -j$(JOBS) --target vkml_runtime_tests vkml_ops_tests
	@$(TEST_ENV) ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1 \
	  LSAN_OPTIONS=suppressions=$(SAN_SUPP)/lsan.supp:print_suppressions=1 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ctest --test-dir build-asan --output-on-failure --no-tests=error $(CTEST_ARGS)

tsan: build
	@if [ ! -f build-tsan/build.ninja ]; then \
	  $(SAN_CMAKE) -S . -B build-tsan -DCMAKE_C_FLAGS="$(TSAN_FLAGS)" -DCMAKE_CXX_FLAGS="$(TSAN_FLAGS)" \
	    -DCMAKE_EXE_LINKER_FLAGS="$(TSAN_FLAGS)"; \
	fi
	@$(CMAKE) --build build-tsan -j$(JOBS) --target vkml_runtime_tests
	@export $(TEST_ENV) VKML_CACHE_DIR=$(CURDIR)/build-tsan/test-cache \
	  TSAN_OPTIONS=suppressions=$(SAN_SUPP)/tsan.supp:halt_on_error=1:second_deadlock_stack=1; \
	  build-tsan/tests/vkml_runtime_tests && \
	  VKML_DEVICE_ORDER=0,0 build-tsan/tests/vkml_runtime_tests --gtest_filter='Threads*'

# Differential fuzzer: random short programs on CPU and vkml for FUZZ_MINUTES with random seeds
# (make test runs a bounded, fixed-seed slice in tests/torch/conformance/test_fuzz.py).
fuzz: build
	@mkdir -p out
	@$(TEST_ENV) $(PY_ENV) $(PYTHON) tests/torch/conformance/fuzz_programs.py --minutes $(FUZZ_MINUTES) \
	  --progress-file out/fuzz_current_seed

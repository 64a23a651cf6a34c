#!/usr/bin/env bash
# The check on a GPU machine: builds vkml against that machine's torch, runs the chosen steps within
# a time budget and writes their logs and summary.json to one folder. CONTRIBUTING.md ("The GPU
# check") says what to prepare and carry. Run with --help for the options.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD

usage() {
  cat <<'EOF'
Usage: scripts/gpu_check.sh [options]

Builds vkml against the machine's torch and runs the chosen steps in this order, each bounded by
what is left of the time budget. Logs and summary.json (step, rc, seconds, counts) go to the output
folder, at most 8 files; a short summary goes to stdout.

Steps (--steps, comma-separated; default build,gtest,pytest):
  build      configure and build into the build folder (Release, bridge files compiled one by one)
  gtest      the C++ suites (runtime, ops in shards); beside pytest when both are chosen
  pytest     the torch suite with VKML_FALLBACK=error, in pytest-xdist workers where installed
  bench      bench/bench_models.py: the five models against PyTorch CUDA in the same run
  bench-ops  bench/bench_ops.py: op groups against CUDA
  bench-attention  bench/bench_attention.py: SDPA paths against CUDA, one run per ';'-separated
             argument list of --bench-attention-args
  bench-ddp  bench/bench_ddp.py: 1 and 2 GPUs (vkml beside CUDA/NCCL) and the 2-rank check, into
             bench.log (needs two GPUs)
  examples   examples/ at full size: demo, amp, vit (Fashion-MNIST), classify, embed, transcribe
             (staged data: scripts/stage_examples.py)

Options:
  --prepare             on the workstation, not the GPU machine: fetch .vktc, .devpy and .fmnist
                        (below) and print what to carry; then exit
  --steps LIST          steps to run (see above)
  --out DIR             output folder (default: $OUT if set, else out/gpu)
  --budget SECONDS      time for the whole run (default 570: one 10-minute device call)
  --build-dir DIR       build folder (default build-gpu; `build` reuses the local build here)
  --python PY           Python that holds torch (default python3)
  --jobs N              build jobs (default: the number of cores)
  --targets LIST        build targets, comma-separated (default: all; `_C,vkml-info` builds what
                        the torch steps need, without the gtests)
  --gtest-filter F      gtest filter (default *)
  --gtest-shards N      parallel shards of the op suite (default 2)
  --workers N           pytest-xdist workers (default 8)
  --pytest-args "..."   pytest's arguments (default: tests/torch without the OpInfo sweep, which
                        `--pytest-args "tests/torch/conformance/test_opinfo.py"` runs alone)
  --bench-args "..."    extra arguments of bench_models.py, runs separated by ';' (e.g.
                        "--only vit,gpt2; --dataloader")
  --bench-ops-args ".." extra arguments of bench_ops.py (e.g. "--only gemm,conv")
  --bench-attention-args ".."  arguments of bench_attention.py, runs separated by ';' (e.g.
                        "--path auto,flash; --path auto,flash --backward --shapes 64x12x197x64")
  --bench-ddp-args ".." extra arguments of bench_ddp.py (e.g. "--only resnet50,vit")
  --examples LIST       comma-separated examples (default: those whose data is here)
  -h, --help            this text

Inputs it uses when present (--prepare makes the first three; scripts/stage_examples.py the last):
  .vktc/     Vulkan loader, headers, glslang and googletest, used where the system has no loader
  .devpy/    pure-Python packages the machine lacks, put on PYTHONPATH
  .fmnist/   Fashion-MNIST (VKML_FASHION_MNIST) for the training examples and their tests
  .stage/    the examples' staged data and its manifest

Example (a quick self-check without a GPU, on the local build):
  scripts/gpu_check.sh --steps gtest --build-dir build --python .venv/bin/python \
    --gtest-filter 'Gemm*' --budget 120
EOF
}

STEPS=build,gtest,pytest
OUT_DIR=${OUT:-out/gpu}
BUDGET=570
BUILD=build-gpu
PY=python3
JOBS=$(nproc 2>/dev/null || echo 4)
TARGETS=''
GTEST_FILTER='*'
GTEST_SHARDS=2
WORKERS=8
PYTEST_ARGS='tests/torch --ignore-glob=*/test_opinfo.py'
BENCH_ARGS=''
BENCH_OPS_ARGS=''
BENCH_ATTN_ARGS=''
BENCH_DDP_ARGS=''
EXAMPLES=''
PREPARE=0
while [ $# -gt 0 ]; do
  case $1 in
    --prepare) PREPARE=1; shift; continue ;;
    --steps) STEPS=$2 ;;
    --out) OUT_DIR=$2 ;;
    --budget) BUDGET=$2 ;;
    --build-dir) BUILD=$2 ;;
    --python) PY=$2 ;;
    --jobs) JOBS=$2 ;;
    --targets) TARGETS=$2 ;;
    --gtest-filter) GTEST_FILTER=$2 ;;
    --gtest-shards) GTEST_SHARDS=$2 ;;
    --workers) WORKERS=$2 ;;
    --pytest-args) PYTEST_ARGS=$2 ;;
    --bench-args) BENCH_ARGS=$2 ;;
    --bench-ops-args) BENCH_OPS_ARGS=$2 ;;
    --bench-attention-args) BENCH_ATTN_ARGS=$2 ;;
    --bench-ddp-args) BENCH_DDP_ARGS=$2 ;;
    --examples) EXAMPLES=$2 ;;
    -h | --help) usage; exit 0 ;;
    *) echo "gpu_check.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
  [ $# -ge 2 ] || { echo "gpu_check.sh: $1 needs a value" >&2; exit 2; }
  shift 2
done
# ---- --prepare: the inputs, made on a workstation with network access -------------------------------
# The GPU machine has an NVIDIA driver but no Vulkan loader, no network and no package manager.
# Vulkan 1.4 headers and a glslang that knows cooperative matrices and bfloat16 come from Debian
# unstable, unpacked without installing (the binaries need glibc 2.38 or newer there).
prepare_toolchain() {
  local d; d=$(mktemp -d)
  mkdir -p "$d/lists/partial" .vktc
  echo "deb http://deb.debian.org/debian sid main" > "$d/sources.list"
  local apt=(apt-get -o "Dir::Etc::SourceList=$d/sources.list" -o Dir::Etc::SourceParts=/dev/null
             -o "Dir::State::Lists=$d/lists" -o "Dir::Cache=$d/cache" -o APT::Architecture=amd64
             -o APT::Architectures=amd64)
  "${apt[@]}" update -qq || return 1
  # The driver loads its OpenGL-side libraries (glvnd) even for Vulkan.
  (cd "$d" && "${apt[@]}" download -qq libvulkan1 libvulkan-dev glslang-tools spirv-tools \
    libglvnd0 libgl1 libglx0 libegl1 libopengl0 libgles2) || return 1
  for deb in "$d"/*.deb; do dpkg -x "$deb" .vktc; done
  # Only what the build runs stays: the transfer to the GPU machine is limited.
  rm -rf "$d" .vktc/usr/share .vktc/usr/include/vulkan/*.hpp .vktc/usr/include/vulkan/*.cppm
  find .vktc/usr/bin -mindepth 1 ! -name glslang ! -name glslangValidator ! -name spirv-val -delete
  [ -d /usr/src/googletest ] && cp -r /usr/src/googletest .vktc/googletest
  prepare_glslang_static
}
# torch.compile's run-time shader compiler (docs/compile.md): glslang's and SPIRV-Tools' static
# libraries from Debian 12, which link on newer systems too, in their own prefix .vktc/glslang.
prepare_glslang_static() {
  local d; d=$(mktemp -d)
  mkdir -p "$d/lists/partial" "$d/x"
  echo "deb http://deb.debian.org/debian bookworm main" > "$d/sources.list"
  local apt=(apt-get -o "Dir::Etc::SourceList=$d/sources.list" -o Dir::Etc::SourceParts=/dev/null
             -o "Dir::State::Lists=$d/lists" -o "Dir::Cache=$d/cache" -o APT::Architecture=amd64
             -o APT::Architectures=amd64)
  "${apt[@]}" update -qq && (cd "$d" && "${apt[@]}" download -qq glslang-dev spirv-tools) || return 1
  for deb in "$d"/*.deb; do dpkg -x "$deb" "$d/x"; done
  local lib=usr/lib/x86_64-linux-gnu
  mkdir -p .vktc/glslang/$lib/cmake .vktc/glslang/usr/include
  cp -r "$d/x/usr/include/glslang" .vktc/glslang/usr/include/
  cp -r "$d/x/$lib/cmake/glslang" .vktc/glslang/$lib/cmake/
  for a in glslang glslang-default-resource-limits MachineIndependent GenericCodeGen OSDependent \
           OGLCompiler SPIRV SPVRemapper HLSL SPIRV-Tools SPIRV-Tools-opt; do
    cp "$d/x/$lib/lib$a.a" .vktc/glslang/$lib/ || return 1
  done
  # glslang's CMake config checks that its tools exist; vkml links the libraries only.
  mkdir -p .vktc/glslang/usr/bin
  for t in glslangValidator spirv-remap; do
    printf '#!/bin/sh\necho "%s: not carried" >&2\nexit 1\n' $t > .vktc/glslang/usr/bin/$t
    chmod +x .vktc/glslang/usr/bin/$t
  done
  rm -rf "$d"
}
if [ $PREPARE = 1 ]; then
  if [ ! -d .vktc ] && ! prepare_toolchain; then
    rm -rf .vktc; echo "--prepare: the toolchain download failed" >&2; exit 1
  fi
  # expecttest: torch's test utilities (OpInfo) import it; the machine's image lacks it.
  if [ ! -d .devpy ] && ! "${VIRTUAL_ENV:-$ROOT/.venv}/bin/python" -m pip install -q --no-deps \
       --target .devpy expecttest; then
    rm -rf .devpy; echo "--prepare: pip failed" >&2; exit 1
  fi
  fm=/usr/share/datasets/fashion-mnist  # Debian's dataset-fashion-mnist (scripts/setup.sh installs it)
  [ -d .fmnist ] || cp -r $fm .fmnist || echo "--prepare: no $fm: the training examples will skip"
  du -sh .vktc .devpy .fmnist 2>/dev/null
  echo "carry: .vktc .devpy .fmnist (with the working tree, within the transfer limit)"
  exit 0
fi

for s in ${STEPS//,/ }; do
  case $s in build | gtest | pytest | bench | bench-ops | bench-attention | bench-ddp | examples) ;;
    *) echo "gpu_check.sh: unknown step $s (see --help)" >&2; exit 2 ;; esac
done
has() { [[ ",$STEPS," == *",$1,"* ]]; }
PY=$(command -v "$PY") || { echo "gpu_check.sh: no Python $PY" >&2; exit 2; }
mkdir -p "$OUT_DIR" && OUT_DIR=$(cd "$OUT_DIR" && pwd)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
T0=$SECONDS

# ---- environment ----------------------------------------------------------------------------------
# The carried toolchain stands in for a Vulkan loader or shader compiler the system lacks.
cmake_extra=()
has_loader() { { ldconfig -p || /sbin/ldconfig -p; } 2>/dev/null | grep -q 'libvulkan\.so\.1 '; }
has_glslang() { command -v glslang || command -v glslangValidator; } > /dev/null
if [ -d .vktc ] && { ! has_loader || ! has_glslang; }; then
  export PATH=$ROOT/.vktc/usr/bin:$PATH
  export LD_LIBRARY_PATH=$ROOT/.vktc/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  cmake_extra+=("-DVKML_VULKAN_INCLUDE_HINT=$ROOT/.vktc/usr/include")
  [ -d .vktc/googletest ] && cmake_extra+=("-DVKML_GTEST_SOURCE=$ROOT/.vktc/googletest")
  [ -d .vktc/glslang ] && cmake_extra+=("-DVKML_GLSLANG_HINT=$ROOT/.vktc/glslang/usr")
  icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
  [ -z "${VK_DRIVER_FILES:-}" ] && [ -f $icd ] && export VK_DRIVER_FILES=$icd
  # The machine's default compiler links libstdc++ statically, which the extension cannot mix with
  # torch's: build with the system one.
  if [ -x /usr/bin/g++ ]; then unset CFLAGS CXXFLAGS LDFLAGS; export CC=/usr/bin/gcc CXX=/usr/bin/g++; fi
  export VKML_CACHE_DIR=${VKML_CACHE_DIR:-/tmp/vkml-cache}
fi
export PYTHONPATH=$ROOT${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
[ -d .devpy ] && export PYTHONPATH=$PYTHONPATH:$ROOT/.devpy
[ -d .fmnist ] && export VKML_FASHION_MNIST=${VKML_FASHION_MNIST:-$ROOT/.fmnist}

# ---- bookkeeping ----------------------------------------------------------------------------------
left() { echo $((BUDGET - (SECONDS - T0))); }
# limit CAP: seconds a step may take: CAP, at most what is left of the budget less 10 s.
limit() { local l=$(($(left) - 10)); echo $((l < $1 ? l : $1)); }
# record STEP RC SECONDS LOG: one row of summary.json (RC "skipped" for a step left out), which is
# rewritten after every step so that a run stopped from outside still leaves its results.
record() {
  printf 'step\t%s\t%s\t%s\t%s\n' "$@" >> "$WORK/steps.tsv"
  "$PY" "$ROOT/scripts/gpu_check_summary.py" "$WORK/steps.tsv" "$OUT_DIR" "$BUDGET" \
    "$((SECONDS - T0))" > "$WORK/line.txt" 2>&1
  tail -n 1 "$WORK/line.txt"
}
# bounded CAP LOG CMD...: CMD with its output appended to LOG, stopped after limit CAP seconds;
# status 125 (summary.json: skipped) where less than 15 s are left.
bounded() {
  local t; t=$(limit "$1"); shift
  local log=$1; shift
  if [ "$t" -lt 15 ]; then echo "skipped: the budget is spent" >> "$log"; return 125; fi
  timeout -k 10 "$t" "$@" >> "$log" 2>&1
}

gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)
torch_version=$("$PY" -c 'import torch; print(torch.__version__)' 2>&1 | tail -1)
commit=$(git describe --always --dirty 2>/dev/null)
echo "gpu_check: ${gpu:-no NVIDIA GPU}; torch $torch_version; steps $STEPS; budget $BUDGET s; out $OUT_DIR"
printf 'meta\t%s\t%s\n' gpu "${gpu:-none}" torch "$torch_version" commit "${commit:-unknown}" \
  requested "$STEPS" > "$WORK/steps.tsv"

# ---- build ----------------------------------------------------------------------------------------
if has build; then
  t=$SECONDS; log=$OUT_DIR/build.log; : > "$log"
  # Unity batches would leave most of a many-core machine idle: the bridge compiles file by file.
  bounded 60 "$log" cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DVKML_UNITY_BRIDGE=OFF \
    -DPython3_EXECUTABLE="$PY" "${cmake_extra[@]}" \
    && bounded 100000 "$log" cmake --build "$BUILD" -j"$JOBS" ${TARGETS:+--target ${TARGETS//,/ }}
  rc=$?
  [ $rc -ne 0 ] && grep -m3 -A12 -E 'error|Error' "$log" | cut -c1-300
  "$BUILD/vkml-info" 2>&1 | head -4 >> "$log"
  record build $rc $((SECONDS - t)) build.log
  [ $rc -eq 0 ] || exit 1
fi
if has gtest && [ ! -x "$BUILD/tests/vkml_ops_tests" ]; then
  echo "gpu_check: $BUILD/tests has no gtest binaries: add build to --steps" >&2; exit 1
fi
if has pytest || has bench || has bench-ops || has bench-attention || has bench-ddp ||
  has examples; then
  "$PY" -c 'import torch_vkml' > "$WORK/import.txt" 2>&1 || {
    tail -3 "$WORK/import.txt"
    echo "gpu_check: torch_vkml does not import with $PY: add build to --steps" >&2; exit 1; }
fi

# ---- gtest and pytest -----------------------------------------------------------------------------
# gtests LIMIT: the runtime suite (and its two-device case) and the op suite's shards side by side;
# logs joined into gtest.log, the largest exit status in $WORK/gtest.rc.
gtests() {
  local t=$SECONDS pids=() i rc=0 bin=$BUILD/tests
  timeout -k 10 "$1" "$bin/vkml_runtime_tests" --gtest_filter="$GTEST_FILTER" > "$WORK/g_runtime.log" 2>&1 &
  pids+=($!)
  for ((i = 0; i < GTEST_SHARDS; i++)); do
    GTEST_TOTAL_SHARDS=$GTEST_SHARDS GTEST_SHARD_INDEX=$i timeout -k 10 "$1" "$bin/vkml_ops_tests" \
      --gtest_filter="$GTEST_FILTER" > "$WORK/g_ops_$i.log" 2>&1 &
    pids+=($!)
  done
  for i in "${pids[@]}"; do wait "$i"; local r=$?; [ $r -gt $rc ] && rc=$r; done
  # The threading tests again on two logical devices over one GPU, as ctest runs them.
  if [ "$GTEST_FILTER" = '*' ] && [ "$(limit 60)" -ge 15 ]; then
    VKML_DEVICE_ORDER=0,0 timeout -k 10 "$(limit 60)" "$bin/vkml_runtime_tests" --gtest_filter='Threads*' \
      > "$WORK/g_two_devices.log" 2>&1 || { r=$?; [ $r -gt $rc ] && rc=$r; }
  fi
  for f in "$WORK"/g_*.log; do echo "==== $(basename "$f" .log | cut -c3-)"; cat "$f"; done \
    > "$OUT_DIR/gtest.log"
  echo $rc > "$WORK/gtest.rc"; echo $((SECONDS - t)) > "$WORK/gtest.s"
}
gtest_pid=''
if has gtest; then
  t=$(limit 100000)
  if [ "$t" -ge 15 ]; then gtests "$t" & gtest_pid=$!; else record gtest skipped 0 ''; fi
fi
if has pytest; then
  t=$SECONDS; log=$OUT_DIR/pytest.log; : > "$log"
  set -f; eval "pytest_argv=($PYTEST_ARGS)"; set +f
  xdist=()
  [ "$WORKERS" -gt 1 ] && "$PY" -c 'import xdist' 2>/dev/null && xdist=(-n "$WORKERS")
  VKML_FALLBACK=error bounded 100000 "$log" "$PY" -m pytest -q -p no:cacheprovider -rfE --tb=short \
    "${xdist[@]}" "${pytest_argv[@]}"
  rc=$?
  grep -E '^(FAILED|ERROR) ' "$log" | cut -c1-300 | head -20
  record pytest $rc $((SECONDS - t)) pytest.log
fi
if [ -n "$gtest_pid" ]; then
  wait "$gtest_pid"
  record gtest "$(cat "$WORK/gtest.rc")" "$(cat "$WORK/gtest.s")" gtest.log
  grep -h -B2 -A6 'Failure$' "$OUT_DIR/gtest.log" | cut -c1-300 | head -30
fi

# ---- benchmarks -----------------------------------------------------------------------------------
if has bench; then
  t=$SECONDS; log=$OUT_DIR/bench.log; : > "$log"; rm -f "$OUT_DIR"/bench_models*.json; rc=0; i=0
  IFS=';' read -ra bench_runs <<< "$BENCH_ARGS"
  [ ${#bench_runs[@]} -gt 0 ] || bench_runs=('')
  for run in "${bench_runs[@]}"; do  # one JSON per run: bench_models.json, bench_models_1.json, ...
    read -ra bench_argv <<< "$run"
    json=$OUT_DIR/bench_models.json; [ $i -gt 0 ] && json=$OUT_DIR/bench_models_$i.json
    echo "==== bench_models ${run}" >> "$log"
    bounded 100000 "$log" "$PY" bench/bench_models.py --json "$json" "${bench_argv[@]}" || rc=$?
    i=$((i + 1))
  done
  grep -E '^ +(model|data) |^ +[a-z0-9_]+ *:|Error' "$log" | cut -c1-200
  record bench $rc $((SECONDS - t)) bench.log
fi
if has bench-ops; then
  t=$SECONDS; log=$OUT_DIR/bench.log; echo "==== bench_ops" >> "$log"; rm -f "$OUT_DIR/bench_ops.json"
  read -ra ops_argv <<< "$BENCH_OPS_ARGS"
  bounded 100000 "$log" "$PY" bench/bench_ops.py --json "$OUT_DIR/bench_ops.json" "${ops_argv[@]}"
  record bench-ops $? $((SECONDS - t)) bench.log
fi
if has bench-attention; then
  t=$SECONDS; log=$OUT_DIR/bench.log; echo "==== bench_attention" >> "$log"; rc=0
  IFS=';' read -ra attn_runs <<< "$BENCH_ATTN_ARGS"
  [ ${#attn_runs[@]} -gt 0 ] || attn_runs=('')
  for run in "${attn_runs[@]}"; do
    read -ra attn_argv <<< "$run"
    bounded 100000 "$log" "$PY" bench/bench_attention.py "${attn_argv[@]}" || rc=$?
  done
  sed -n '/==== bench_attention/,$p' "$log" | grep -E '^(sdpa| +[0-9]+x| +BxHxLxE)|Error' | cut -c1-200
  record bench-attention $rc $((SECONDS - t)) bench.log
fi
if has bench-ddp; then
  t=$SECONDS; log=$OUT_DIR/bench.log; echo "==== bench_ddp" >> "$log"
  read -ra ddp_argv <<< "$BENCH_DDP_ARGS"
  bounded 100000 "$log" "$PY" bench/bench_ddp.py "${ddp_argv[@]}"
  rc=$?
  sed -n '/==== bench_ddp/,$p' "$log" | grep -E '^(model|resnet50|vit|gpt2|check) ' | cut -c1-200
  record bench-ddp $rc $((SECONDS - t)) bench.log
fi

# ---- examples -------------------------------------------------------------------------------------
# unstage: the staged parts checked against their manifest and unpacked into $EXDATA (once).
EXDATA=/tmp/vkml-exdata
unstage() {
  [ -f .stage/manifest ] || return 1
  local want sum parts=()
  want=$(awk '$1 == "sha256" {print $2}' .stage/manifest)
  [ "$(cat "$EXDATA/.complete" 2>/dev/null)" = "$want" ] && return 0
  mapfile -t parts < <(ls .stage/part* 2>/dev/null | sort -V)
  if [ "${#parts[@]}" -ne "$(awk '$1 == "parts" {print $2}' .stage/manifest)" ]; then
    echo "examples: ${#parts[@]} staged parts here, the manifest lists more: carry the missing ones"
    return 1
  fi
  sum=$(cat "${parts[@]}" | sha256sum | cut -d' ' -f1)
  [ "$sum" = "$want" ] || { echo "examples: the staged parts do not match their manifest"; return 1; }
  rm -rf "$EXDATA" && mkdir -p "$EXDATA" && cat "${parts[@]}" | tar -x -C "$EXDATA" --strip-components=1 \
    && echo "$want" > "$EXDATA/.complete"
}
if has examples; then
  log=$OUT_DIR/examples.log; : > "$log"
  export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TQDM_MININTERVAL=10
  staged=0
  if unstage; then
    staged=1
    export VKML_EXAMPLES_DATA=$EXDATA PYTHONPATH=$PYTHONPATH:$EXDATA/python
  fi
  if [ -z "$EXAMPLES" ]; then
    [ -d "${VKML_FASHION_MNIST:-/usr/share/datasets/fashion-mnist}" ] && EXAMPLES=amp,vit,demo
    [ $staged = 1 ] && EXAMPLES=${EXAMPLES:+$EXAMPLES,}classify,embed,transcribe
  fi
  # name: the script, its arguments, its own time cap in seconds
  declare -A script=([demo]=demo.py [amp]=amp_training.py [vit]=train_vit.py
    [classify]=classify_image.py [embed]=sentence_embeddings.py [transcribe]=transcribe.py)
  declare -A args=([demo]='--epochs 2' [vit]='--epochs 1')
  declare -A cap=([demo]=200 [amp]=120 [vit]=120 [classify]=120 [embed]=60 [transcribe]=150)
  for name in ${EXAMPLES//,/ }; do
    [ -n "${script[$name]:-}" ] || { echo "examples: unknown example $name"; continue; }
    t=$SECONDS
    echo "==== example $name" >> "$log"
    read -ra ex_argv <<< "${args[$name]:-}"
    VKML_FALLBACK=error bounded "${cap[$name]}" "$log" "$PY" -u "examples/${script[$name]}" "${ex_argv[@]}"
    record "examples/$name" $? $((SECONDS - t)) examples.log
  done
  [ -n "$EXAMPLES" ] || { echo "examples: no data here (.fmnist, .stage)"; record examples skipped 0 ''; }
fi
echo "gpu_check: done in $((SECONDS - T0)) s; $(ls "$OUT_DIR" | tr '\n' ' ')"

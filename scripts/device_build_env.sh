# Sourced by the per-session GPU scripts (device_s5_check.sh, device_s6*_check.sh): builds with
# scripts/device_session_check.sh (STEPS=none), prints the GPU/driver line and the build time, and
# exports what the Python commands after it need (the carried Vulkan toolchain, the package path).
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
STEPS=none bash scripts/device_session_check.sh > "$OUT/build.txt" 2>&1 || { cat "$OUT/build.txt"; exit 1; }
head -2 "$OUT/build.txt"
export PATH=$PWD/.vktc/usr/bin:$PATH LD_LIBRARY_PATH=$PWD/.vktc/usr/lib/x86_64-linux-gnu
export PYTHONPATH=$PWD VKML_CACHE_DIR=/tmp/vkml-cache

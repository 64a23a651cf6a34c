# Sourced by the per-session GPU scripts (device_s12_run.sh, device_s13_run.sh) after the build:
# both gtest binaries beside the torch suite without the OpInfo sweep in 8 pytest-xdist workers
# (the plugin carried in .devpy, Fashion-MNIST in .fmnist), within the call's 575 s; logs to $OUT.
# (ops needs more than 240 s while the pytest workers share the CPU: session 17 cut it at 161 of 198)
( timeout 120 ./build-h200/tests/vkml_runtime_tests > $OUT/gtest_runtime.log 2>&1
  timeout 420 ./build-h200/tests/vkml_ops_tests > $OUT/gtest_ops.log 2>&1 ) &
gtests=$!
workers=$(python3 -c "import xdist" 2>/dev/null && echo "-n 8")
export VKML_FASHION_MNIST=$PWD/.fmnist
VKML_FALLBACK=error timeout $((575 - SECONDS)) python3 -m pytest -q -p no:cacheprovider $workers \
  -rfE --tb=short tests/torch --ignore=tests/torch/test_opinfo.py > $OUT/pytest.log 2>&1
echo "pytest ($workers): $(tail -1 $OUT/pytest.log)"
grep -E "^(FAILED|ERROR) " $OUT/pytest.log | cut -c1-300 | head -24
wait $gtests
for t in runtime ops; do
  echo "gtest $t: $(grep -E '^\[  (PASSED|FAILED)' $OUT/gtest_$t.log | tr '\n' ' ')"
done
grep -h -A6 "Failure" $OUT/gtest_*.log | head -30

# Sourced by the per-session GPU scripts (device_s15_run.sh, device_s16_run.sh): the five model
# benchmarks beside CUDA (bench/bench_models.py, JSON to $OUT/models.json) while nvidia-smi samples
# clocks, power and throttle reasons every 250 ms ($OUT/smi.csv), then a one-line summary of those.
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active \
  --format=csv -lms 250 > $OUT/smi.csv 2>&1 &
smi=$!
timeout 330 python3 bench/bench_models.py --json $OUT/models.json 2>&1 |
  grep -E "model|loss|fallbacks"
kill $smi
awk -F', ' 'NR > 1 {n++; c += $2; if ($6 != "0x0000000000000000" && $6 != "0x0000000000000001") t++}
  END {printf "smi: %d samples, mean SM clock %.0f MHz, %d with a throttle reason beyond idle\n", n, c / n, t}' $OUT/smi.csv

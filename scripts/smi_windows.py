"""nvidia-smi samples inside each benchmark's timing window (the GPU's state while it was timed).

    python3 scripts/smi_windows.py smi.csv models.txt

smi.csv: `nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,
clocks_throttle_reasons.active --format=csv -lms 250`. models.txt: bench_models.py's output, whose
"diagnose NAME timed HH:MM:SS.mmm-HH:MM:SS.mmm UTC" lines give the windows (same day assumed).
"""

from __future__ import annotations

import re
import sys


def seconds(hms: str) -> float:
    h, m, s = hms.split(":")
    return int(h) * 3600 + int(m) * 60 + float(s)


def main() -> None:
    samples = []
    for line in open(sys.argv[1]):
        parts = [p.strip() for p in line.split(",")]
        if len(parts) < 6 or not re.match(r"\d{4}/", parts[0]):
            continue
        num = lambda text: float(text.split()[0]) if text.split() else float("nan")
        samples.append((seconds(parts[0].split()[1]), num(parts[1]), num(parts[2]), num(parts[3]),
                        parts[5]))
    pattern = re.compile(r"diagnose (\S+) timed (\S+)-(\S+) UTC")
    for line in open(sys.argv[2]):
        m = pattern.search(line)
        if not m:
            continue
        t0, t1 = seconds(m.group(2)), seconds(m.group(3))
        inside = [s for s in samples if t0 <= s[0] <= t1]
        if not inside:
            print(f"smi {m.group(1)}: no samples in {t1 - t0:.2f} s")
            continue
        sm = [s[1] for s in inside]
        reasons = sorted({s[4] for s in inside})
        print(f"smi {m.group(1)}: {len(inside)} samples, SM {min(sm):.0f}-{max(sm):.0f} MHz, "
              f"mem {min(s[2] for s in inside):.0f} MHz, power {min(s[3] for s in inside):.0f}-"
              f"{max(s[3] for s in inside):.0f} W, reasons {' '.join(reasons)}")


if __name__ == "__main__":
    main()

"""scripts/check_no_fallback.py: everyday tensor programs (indexing, masking, sorting, sampling,
unique/bincount, one-hot, scans, gather/scatter, where, cat/stack/pad) run without any op falling
back to the CPU."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def test_everyday_programs_need_no_fallback():
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, str(ROOT / "scripts/check_no_fallback.py")],
                          env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "fallback_stats(): {}" in proc.stdout

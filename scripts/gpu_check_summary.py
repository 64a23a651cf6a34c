"""Writes summary.json for scripts/gpu_check.sh from its step table and the logs in the output
folder, and prints one line about the last step.

    python scripts/gpu_check_summary.py STEPS_TSV OUT_DIR BUDGET_S ELAPSED_S

STEPS_TSV rows: "meta<TAB>key<TAB>value" or "step<TAB>name<TAB>rc<TAB>seconds<TAB>log".
"""

from __future__ import annotations

import json
import math
import re
import sys
from pathlib import Path

PYTEST_COUNT = re.compile(r"(\d+) (passed|failed|skipped|xfailed|xpassed|errors?|deselected)\b")


def read(path: Path) -> str:
    return path.read_text(errors="replace") if path.is_file() else ""


def gtest_counts(text: str) -> dict:
    passed = sum(int(n) for n in re.findall(r"^\[  PASSED  \] (\d+) tests?\.", text, re.M))
    failed_names = sorted(set(re.findall(r"^\[  FAILED  \] (\w+\.\S+)", text, re.M)))
    finished = set(re.findall(r"^\[ +(?:OK|FAILED) +\] (\S+)", text, re.M))
    unfinished = [t for t in re.findall(r"^\[ RUN +\] (\S+)", text, re.M) if t not in finished]
    counts = {"passed": passed, "failed": len(failed_names), "failed_tests": failed_names[:30]}
    if unfinished:  # a crash or a timeout stopped these
        counts["unfinished_tests"] = unfinished[:10]
    return counts


def pytest_counts(text: str) -> dict:
    lines = [ln for ln in text.splitlines() if PYTEST_COUNT.search(ln) and " in " in ln]
    counts: dict = {}
    if lines:
        for n, what in PYTEST_COUNT.findall(lines[-1]):
            counts[what.rstrip("s") if what.startswith("error") else what] = int(n)
    else:
        counts["note"] = "no final pytest line (stopped before the end)"
    failed = re.findall(r"^(?:FAILED|ERROR) (\S+)", text, re.M)
    if failed:
        counts["failed_tests"] = failed[:30]
    return counts


def bench_counts(path: Path) -> dict:
    if not path.is_file():
        return {"note": f"no {path.name}"}
    data = json.loads(path.read_text())
    models = {}
    for r in data["results"]:
        ratio = r["ref_ms"] / r["vkml_ms"] if r.get("ref_ms") and r["vkml_ms"] > 0 else None
        models[r["name"]] = {"vkml_ms": round(r["vkml_ms"], 3),
                             "ref_ms": None if r.get("ref_ms") is None else round(r["ref_ms"], 3),
                             "ref_over_vkml": None if ratio is None else round(ratio, 3)}
        extra = r.get("extra", {})
        if "loss_vkml" in extra:  # training: the first step's loss on both devices
            models[r["name"]].update(loss_vkml=extra["loss_vkml"], loss_ref=extra["loss_ref"])
    return {"reference": data["results"][0]["ref_device"] if data["results"] else None,
            "environment": data.get("environment", {}), "results": models}


def bench_ops_counts(path: Path) -> dict:
    if not path.is_file():
        return {"note": f"no {path.name}"}
    rows = json.loads(path.read_text())["results"]
    ratios = [r["ref_ms"] / r["vkml_ms"] for r in rows if r.get("ref_ms") and r["vkml_ms"] > 0]
    geomean = math.exp(sum(map(math.log, ratios)) / len(ratios)) if ratios else None
    return {"rows": len(rows), "geomean_ref_over_vkml": geomean and round(geomean, 3)}


def example_counts(text: str, name: str) -> dict:
    section = text.split(f"==== example {name}\n", 1)[-1].split("==== example ", 1)[0]
    fallbacks = re.findall(r"^(?:CPU fallbacks|ops that ran on the CPU).*$", section, re.M)
    return {"pass": len(re.findall(r"^\[PASS\]", section, re.M)),
            "fail": len(re.findall(r"^\[FAIL\]", section, re.M)),
            "fallbacks": fallbacks[-1] if fallbacks else "no report (did not finish)"}


def status(rc: str) -> str:
    if rc in ("skipped", "125"):
        return "skipped (budget spent or nothing to run)"
    return {"0": "ok", "124": "timeout", "137": "timeout"}.get(rc, "failed")


def main() -> None:
    tsv, out, budget, elapsed = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], sys.argv[4]
    summary: dict = {"budget_s": int(budget), "elapsed_s": int(elapsed), "steps": []}
    for row in tsv.read_text().splitlines():
        kind, *cols = row.split("\t")
        if kind == "meta":
            summary[cols[0]] = cols[1]
            continue
        name, rc, seconds, log = cols
        counts: dict = {}
        if status(rc).startswith("skipped"):
            pass
        elif name == "gtest":
            counts = gtest_counts(read(out / log))
        elif name == "pytest":
            counts = pytest_counts(read(out / log))
        elif name == "bench":
            counts = bench_counts(out / "bench_models.json")
        elif name == "bench-ops":
            counts = bench_ops_counts(out / "bench_ops.json")
        elif name.startswith("examples/"):
            counts = example_counts(read(out / log), name.split("/", 1)[1])
        summary["steps"].append({"step": name, "rc": None if rc == "skipped" else int(rc),
                                 "status": status(rc), "seconds": int(seconds), "log": log,
                                 "counts": counts})
    (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    if summary["steps"]:
        last = summary["steps"][-1]
        short = {k: v for k, v in last["counts"].items()
                 if isinstance(v, (int, float, str)) and k != "environment"}
        if last["step"] == "bench":
            short = {k: v["ref_over_vkml"] for k, v in last["counts"].get("results", {}).items()}
        print(f"{last['step']}: {last['status']} (rc {last['rc']}), {last['seconds']} s"
              + (f"; {json.dumps(short)}" if short else ""))


if __name__ == "__main__":
    main()

"""Plots benchmark JSON files (from bench_ops.py / bench_models.py --json) as vkml against the
reference backend, one bar pair per benchmark, speed relative to the reference.

    python bench/plot.py out/ops.json out/models.json -o docs/performance.png
"""

from __future__ import annotations

import argparse
import json

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="+")
    ap.add_argument("-o", "--output", default="performance.png")
    args = ap.parse_args()
    names, ratios, ref, env = [], [], "reference", {}
    for path in args.files:
        data = json.load(open(path))
        env = data["environment"]
        for r in data["results"]:
            if r["ref_ms"] is None or r["vkml_ms"] <= 0:
                continue
            names.append(f"{r['group']}: {r['name']}")
            ratios.append(r["ref_ms"] / r["vkml_ms"])
            ref = r["ref_device"]
    height = max(4.0, 0.22 * len(names) + 1.5)
    fig, ax = plt.subplots(figsize=(10, height))
    y = range(len(names))
    ax.barh(list(y), [1.0] * len(names), color="#bbbbbb", label=f"{ref} (= 1.0)")
    ax.barh(list(y), ratios, height=0.5, color="#c0392b", label="vkml")
    ax.set_yticks(list(y))
    ax.set_yticklabels(names, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel(f"speed relative to {ref} (higher is better)")
    ax.set_title(f"vkml vs {ref}: {env.get('vkml_device', '')}, {env.get('date', '')}")
    ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(args.output, dpi=110)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()

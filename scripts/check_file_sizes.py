#!/usr/bin/env python3
"""Checks source file lengths: warns above 800 lines, fails above 1,500 (see ARCHITECTURE.md).

Looks at git-tracked files plus untracked ones that git does not ignore, so new files are caught
before they are committed.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

WARN_LINES = 800
FAIL_LINES = 1500
EXTENSIONS = {".cc", ".cpp", ".c", ".h", ".hpp", ".inc", ".def", ".comp", ".glsl", ".py", ".cmake"}
NAMES = {"CMakeLists.txt"}


def candidate_files(root: Path) -> list[Path]:
    out = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=root,
        check=True,
        capture_output=True,
    ).stdout
    paths = sorted({p for p in out.decode().split("\0") if p})
    return [
        root / p
        for p in paths
        if (Path(p).suffix in EXTENSIONS or Path(p).name in NAMES) and (root / p).is_file()
    ]


def count_lines(path: Path) -> int:
    with path.open("rb") as f:
        return sum(1 for _ in f)


def main() -> int:
    root = Path(__file__).resolve().parent.parent
    files = candidate_files(root)
    warned, failed = [], []
    for path in files:
        n = count_lines(path)
        rel = path.relative_to(root)
        if n > FAIL_LINES:
            failed.append(rel)
            print(f"error: {rel}: {n} lines (limit {FAIL_LINES})")
        elif n > WARN_LINES:
            warned.append(rel)
            print(f"warning: {rel}: {n} lines (aim for {WARN_LINES} or fewer)")
    print(
        f"file sizes: {len(files)} files checked, {len(warned)} over {WARN_LINES} lines, "
        f"{len(failed)} over {FAIL_LINES} lines"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

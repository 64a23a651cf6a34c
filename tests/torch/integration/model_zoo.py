"""Small models for the end-to-end training tests, and a harness that trains one model on the CPU
and on vkml from the same initial weights and batches, recording losses and gradients per step.

Every model comes as a ModelCase: a builder (seeded, so two calls give the same weights), a batch
maker (seeded CPU tensors) and a loss function. Dropout is off everywhere: the two devices draw
different random numbers, and the point is to compare arithmetic, not RNG streams."""

from __future__ import annotations

import copy
import dataclasses
import os
from typing import Callable

import torch
import torch.nn as nn
import torch.nn.functional as F

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


# ---- ResNet-18 (the CIFAR layout for 32x32 inputs: 3x3 stem, no max-pool) ----------------------
# torchvision's 7x7 stride-2 stem and max-pool would leave 1x1 maps in the last stage, where
# BatchNorm over a few samples makes gradients explode and runs diverge after a step or two.
class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, in_planes: int, planes: int, stride: int = 1):
        super().__init__()
        self.conv1 = nn.Conv2d(in_planes, planes, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, stride=1, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.shortcut = nn.Sequential()
        if stride != 1 or in_planes != planes:
            self.shortcut = nn.Sequential(
                nn.Conv2d(in_planes, planes, 1, stride=stride, bias=False), nn.BatchNorm2d(planes)
            )

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + self.shortcut(x))


class ResNet18(nn.Module):
    """The ResNet-18 layout ([2, 2, 2, 2] basic blocks) with a configurable base width."""

    def __init__(self, width: int = 8, num_classes: int = 10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, width, 3, stride=1, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        layers, in_planes = [], width
        for i, blocks in enumerate([2, 2, 2, 2]):
            planes = width * 2**i
            for b in range(blocks):
                stride = 2 if (i > 0 and b == 0) else 1
                layers.append(BasicBlock(in_planes, planes, stride))
                in_planes = planes
        self.layers = nn.Sequential(*layers)
        self.fc = nn.Linear(in_planes, num_classes)
        # torchvision's zero_init_residual: each block starts as the identity, which keeps the
        # gradients of a randomly initialised ResNet well conditioned (comparable across devices).
        for block in layers:
            nn.init.zeros_(block.bn2.weight)

    def forward(self, x):
        out = self.layers(F.relu(self.bn1(self.conv1(x))))
        out = F.adaptive_avg_pool2d(out, 1).flatten(1)
        return self.fc(out)


# ---- recurrent models --------------------------------------------------------------------------
class RecurrentClassifier(nn.Module):
    """nn.LSTM / nn.GRU / nn.RNN (2 layers) over a sequence, a linear head on every time step."""

    def __init__(self, kind: str, features: int = 6, hidden: int = 12, classes: int = 5):
        super().__init__()
        rnn = {"lstm": nn.LSTM, "gru": nn.GRU, "rnn": nn.RNN}[kind]
        self.rnn = rnn(features, hidden, num_layers=2, batch_first=True)
        self.head = nn.Linear(hidden, classes)

    def forward(self, x):
        out, _ = self.rnn(x)
        return self.head(out)


class RecurrentCells(nn.Module):
    """LSTMCell, GRUCell and RNNCell (tanh and relu) unrolled by hand: the cell ops, not the
    fused sequence op, are what this exercises."""

    def __init__(self, features: int = 6, hidden: int = 10, classes: int = 5):
        super().__init__()
        self.lstm = nn.LSTMCell(features, hidden)
        self.gru = nn.GRUCell(hidden, hidden)
        self.rnn_tanh = nn.RNNCell(hidden, hidden, nonlinearity="tanh")
        self.rnn_relu = nn.RNNCell(hidden, hidden, nonlinearity="relu")
        self.head = nn.Linear(hidden, classes)
        self.hidden = hidden

    def forward(self, x):
        batch, steps, _ = x.shape
        zeros = x.new_zeros(batch, self.hidden)
        h, c, g, t, r = zeros, zeros, zeros, zeros, zeros
        outs = []
        for s in range(steps):
            h, c = self.lstm(x[:, s], (h, c))
            g = self.gru(h, g)
            t = self.rnn_tanh(g, t)
            r = self.rnn_relu(t, r)
            outs.append(r)
        return self.head(torch.stack(outs, 1))


# ---- transformers models (random weights from a config; nothing is downloaded) ----------------
def _hf_common(attn: str) -> dict:
    return {"attn_implementation": attn}


def vit_model(image: int = 16, patch: int = 4, dim: int = 32, layers: int = 2, attn: str = "eager"):
    from transformers import ViTConfig, ViTForImageClassification

    config = ViTConfig(
        image_size=image, patch_size=patch, num_channels=3, hidden_size=dim, num_hidden_layers=layers,
        num_attention_heads=4, intermediate_size=2 * dim, hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0, num_labels=10, **_hf_common(attn),
    )
    return ViTForImageClassification(config)


def gpt2_model(attn: str = "eager"):
    from transformers import GPT2Config, GPT2LMHeadModel

    config = GPT2Config(
        vocab_size=97, n_positions=32, n_embd=32, n_layer=2, n_head=4, resid_pdrop=0.0,
        embd_pdrop=0.0, attn_pdrop=0.0, bos_token_id=1, eos_token_id=2, **_hf_common(attn),
    )
    return GPT2LMHeadModel(config)


def bert_model(attn: str = "eager"):
    from transformers import BertConfig, BertForSequenceClassification

    config = BertConfig(
        vocab_size=97, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
        intermediate_size=64, max_position_embeddings=32, hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0, num_labels=3, **_hf_common(attn),
    )
    return BertForSequenceClassification(config)


WHISPER_MELS, WHISPER_FRAMES = 8, 32  # the encoder's conv stride 2 halves frames to max_source


def whisper_model(attn: str = "eager"):
    from transformers import WhisperConfig, WhisperForConditionalGeneration

    config = WhisperConfig(
        vocab_size=97, num_mel_bins=WHISPER_MELS, encoder_layers=1, decoder_layers=1,
        encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=64,
        decoder_ffn_dim=64, d_model=32, max_source_positions=WHISPER_FRAMES // 2,
        max_target_positions=16, pad_token_id=0, bos_token_id=1, eos_token_id=2,
        decoder_start_token_id=1, dropout=0.0, attention_dropout=0.0, activation_dropout=0.0,
        **_hf_common(attn),
    )
    return WhisperForConditionalGeneration(config)


# ---- cases: builder, batches, loss ------------------------------------------------------------
Batch = tuple  # of CPU tensors, moved to the device by the harness


@dataclasses.dataclass
class ModelCase:
    name: str
    build: Callable[[], nn.Module]
    batch: Callable[[torch.Generator, int], Batch]  # (generator, batch size) -> tensors
    loss: Callable[[nn.Module, Batch], torch.Tensor]
    batch_size: int = 4
    optimizer: str = "adamw"
    lr: float = 1e-3


def _images(size: int, classes: int = 10):
    def make(gen, n):
        return torch.randn(n, 3, size, size, generator=gen), torch.randint(0, classes, (n,), generator=gen)

    return make


def _sequence(features: int, steps: int, classes: int):
    def make(gen, n):
        return (torch.randn(n, steps, features, generator=gen),
                torch.randint(0, classes, (n, steps), generator=gen))

    return make


def _classify(model, batch):
    x, y = batch
    return F.cross_entropy(model(x), y)


def _classify_hf(model, batch):
    x, y = batch
    return model(pixel_values=x, labels=y).loss


def _classify_steps(model, batch):
    x, y = batch
    logits = model(x)
    return F.cross_entropy(logits.flatten(0, 1), y.flatten())


def _tokens(vocab: int, length: int):
    def make(gen, n):
        ids = torch.randint(3, vocab, (n, length), generator=gen)
        mask = torch.ones(n, length, dtype=torch.long)
        mask[0, length - 3:] = 0  # one padded sequence: the attention mask has to work
        return ids, mask

    return make


def _gpt2_loss(model, batch):
    ids, mask = batch
    labels = ids.masked_fill(mask == 0, -100)
    return model(input_ids=ids, attention_mask=mask, labels=labels).loss


def _bert_batch(gen, n):
    ids, mask = _tokens(97, 12)(gen, n)
    return ids, mask, torch.randint(0, 3, (n,), generator=gen)


def _bert_loss(model, batch):
    ids, mask, y = batch
    return model(input_ids=ids, attention_mask=mask, labels=y).loss


def _whisper_batch(gen, n):
    features = torch.randn(n, WHISPER_MELS, WHISPER_FRAMES, generator=gen)
    labels = torch.randint(3, 97, (n, 8), generator=gen)
    return features, labels


def _whisper_loss(model, batch):
    features, labels = batch
    return model(input_features=features, labels=labels).loss


def _seeded(fn, *args, **kwargs):
    def build():
        torch.manual_seed(0)
        return fn(*args, **kwargs)

    return build


CASES = {
    "resnet18": ModelCase("resnet18", _seeded(ResNet18, width=8), _images(32), _classify,
                          batch_size=2, optimizer="sgd", lr=0.01),
    "vit": ModelCase("vit", _seeded(vit_model), _images(16), _classify_hf),
    "gpt2": ModelCase("gpt2", _seeded(gpt2_model), _tokens(97, 12), _gpt2_loss),
    "bert": ModelCase("bert", _seeded(bert_model), _bert_batch, _bert_loss),
    "whisper": ModelCase("whisper", _seeded(whisper_model), _whisper_batch, _whisper_loss),
    "lstm": ModelCase("lstm", _seeded(RecurrentClassifier, "lstm"), _sequence(6, 7, 5),
                      _classify_steps, optimizer="sgd", lr=0.01),
    "gru": ModelCase("gru", _seeded(RecurrentClassifier, "gru"), _sequence(6, 7, 5),
                     _classify_steps, optimizer="sgd", lr=0.01),
    "rnn": ModelCase("rnn", _seeded(RecurrentClassifier, "rnn"), _sequence(6, 7, 5),
                     _classify_steps, optimizer="sgd", lr=0.01),
    "cells": ModelCase("cells", _seeded(RecurrentCells), _sequence(6, 5, 5), _classify_steps,
                       optimizer="sgd", lr=0.01),
}


# ---- the harness -------------------------------------------------------------------------------
@dataclasses.dataclass
class Trace:
    losses: list[float]
    grads: list[dict[str, torch.Tensor]]  # per step: parameter name -> float32 CPU gradient


def make_optimizer(case: ModelCase, params):
    if case.optimizer == "sgd":
        return torch.optim.SGD(params, lr=case.lr, momentum=0.9)
    return torch.optim.AdamW(params, lr=case.lr, weight_decay=0.01)


def train(case: ModelCase, model: nn.Module, device: str, steps: int, amp_dtype=None,
          batch_size: int | None = None) -> Trace:
    """Trains `model` (moved to device) for `steps` steps on the case's seeded batches."""
    model = model.to(device).train()
    opt = make_optimizer(case, model.parameters())
    gen = torch.Generator().manual_seed(1)
    trace = Trace([], [])
    for _ in range(steps):
        batch = tuple(t.to(device) for t in case.batch(gen, batch_size or case.batch_size))
        opt.zero_grad(set_to_none=True)
        with torch.autocast(torch.device(device).type, dtype=amp_dtype or torch.float16,
                            enabled=amp_dtype is not None):
            loss = case.loss(model, batch)
        loss.backward()
        trace.losses.append(loss.detach().float().item())
        trace.grads.append({n: p.grad.detach().float().cpu() for n, p in model.named_parameters()
                            if p.grad is not None})
        opt.step()
    return trace


def cpu_and_copy(case: ModelCase) -> tuple[nn.Module, nn.Module]:
    """The model for the CPU run and an identical deep copy for the vkml run."""
    model = case.build()
    return model, copy.deepcopy(model)


def grad_mismatches(got: dict, ref: dict, rtol: float, atol_frac: float) -> list[str]:
    """Parameters whose gradient differs from the reference by more than rtol * ||g_ref|| plus
    atol_frac times the whole model's gradient norm (the absolute part covers gradients that are
    zero in exact arithmetic, e.g. an attention key bias, where either side holds rounding noise)."""
    assert got.keys() == ref.keys(), f"gradient sets differ: {got.keys() ^ ref.keys()}"
    total = torch.sqrt(sum(g.double().pow(2).sum() for g in ref.values())).item()
    bad = []
    for name, g_ref in ref.items():
        g = got[name]
        assert torch.isfinite(g).all(), f"{name}: non-finite gradient on vkml"
        err = (g.double() - g_ref.double()).norm().item()
        bound = rtol * g_ref.double().norm().item() + atol_frac * total
        if not err <= bound:
            bad.append(f"{name}: |diff| {err:.3g} > {bound:.3g} (|ref| {g_ref.norm().item():.3g})")
    return bad

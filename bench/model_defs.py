"""Models of the benchmark suite, written the way users write them (plain torch.nn).

ResNet-18/50 (torchvision's layout), ViT-B/16, a GPT-2-small-sized decoder, a Llama-style
LLM with a static KV cache (Qwen2.5-0.5B's shape) and a Stable-Diffusion-style UNet block stack.
Smaller arguments shrink widths and depths for the CPU-only machine, where lavapipe runs every
kernel on two cores.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, cin: int, width: int, stride: int = 1) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(cin, width, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.conv2 = nn.Conv2d(width, width, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(width)
        self.down = None
        if stride != 1 or cin != width:
            self.down = nn.Sequential(nn.Conv2d(cin, width, 1, stride, bias=False),
                                      nn.BatchNorm2d(width))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + (self.down(x) if self.down is not None else x))


class Bottleneck(nn.Module):
    expansion = 4

    def __init__(self, cin: int, width: int, stride: int = 1) -> None:
        super().__init__()
        cout = width * 4
        self.conv1 = nn.Conv2d(cin, width, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.conv2 = nn.Conv2d(width, width, 3, stride, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(width)
        self.conv3 = nn.Conv2d(width, cout, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(cout)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                      nn.BatchNorm2d(cout))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = F.relu(self.bn1(self.conv1(x)))
        out = F.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        return F.relu(out + (self.down(x) if self.down is not None else x))


class ResNet(nn.Module):
    def __init__(self, block, layers: list[int], classes: int = 1000, small_input: bool = False,
                 width: int = 64) -> None:
        super().__init__()
        if small_input:  # 32x32 images: 3x3 stem, no max-pool
            self.stem = nn.Sequential(nn.Conv2d(3, width, 3, 1, 1, bias=False),
                                      nn.BatchNorm2d(width), nn.ReLU())
        else:
            self.stem = nn.Sequential(nn.Conv2d(3, width, 7, 2, 3, bias=False),
                                      nn.BatchNorm2d(width), nn.ReLU(), nn.MaxPool2d(3, 2, 1))
        stages, cin = [], width
        for i, n in enumerate(layers):
            w = width * 2**i
            for j in range(n):
                stages.append(block(cin, w, 2 if (j == 0 and i > 0) else 1))
                cin = w * block.expansion
        self.stages = nn.Sequential(*stages)
        self.fc = nn.Linear(cin, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.stages(self.stem(x))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


def resnet18(classes: int = 10, small_input: bool = True, width: int = 64) -> ResNet:
    return ResNet(BasicBlock, [2, 2, 2, 2], classes, small_input, width)


def resnet50(classes: int = 1000, width: int = 64, layers: list[int] | None = None) -> ResNet:
    return ResNet(Bottleneck, layers or [3, 4, 6, 3], classes, False, width)


class Block(nn.Module):
    """Pre-norm transformer block; attention through F.scaled_dot_product_attention."""

    def __init__(self, dim: int, heads: int, causal: bool) -> None:
        super().__init__()
        self.heads, self.causal = heads, causal
        self.ln1, self.ln2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.fc1, self.fc2 = nn.Linear(dim, 4 * dim), nn.Linear(4 * dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, t, 3, self.heads, d // self.heads).unbind(2)
        y = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                           is_causal=self.causal)
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, d))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


class ViT(nn.Module):
    def __init__(self, image: int = 224, patch: int = 16, dim: int = 768, depth: int = 12,
                 heads: int = 12, classes: int = 1000, channels: int = 3) -> None:
        super().__init__()
        self.patch = nn.Conv2d(channels, dim, patch, patch)
        n = (image // patch) ** 2
        self.cls = nn.Parameter(torch.zeros(1, 1, dim))
        self.pos = nn.Parameter(torch.randn(1, n + 1, dim) * 0.02)
        self.blocks = nn.Sequential(*[Block(dim, heads, False) for _ in range(depth)])
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.patch(x).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], 1) + self.pos
        return self.head(self.norm(self.blocks(x))[:, 0])


class GPT(nn.Module):
    def __init__(self, vocab: int = 50257, ctx: int = 1024, dim: int = 768, depth: int = 12,
                 heads: int = 12) -> None:
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(ctx, dim)
        self.blocks = nn.Sequential(*[Block(dim, heads, True) for _ in range(depth)])
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab, bias=False)
        self.head.weight = self.tok.weight  # tied, as GPT-2
        for p in self.parameters():
            if p.dim() > 1:
                nn.init.normal_(p, std=0.02)

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        pos = torch.arange(idx.shape[1], device=idx.device)
        return self.head(self.norm(self.blocks(self.tok(idx) + self.pos(pos))))


class GPTDecode(nn.Module):
    """One token per call through a GPT's weights, with a static key/value cache written at
    `pos`: every call has the same shapes, the form that torch.compile's graph replay
    (mode="reduce-overhead") captures once and replays."""

    def __init__(self, gpt: GPT, batch: int, length: int) -> None:
        super().__init__()
        self.gpt = gpt
        heads, dim = gpt.blocks[0].heads, gpt.norm.normalized_shape[0]
        shape = (len(gpt.blocks), batch, heads, length, dim // heads)
        self.register_buffer("k", torch.zeros(shape))
        self.register_buffer("v", torch.zeros(shape))

    def forward(self, idx: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
        """idx: (batch, 1) token ids; pos: (1,) their position. Returns (batch, vocab) logits."""
        g = self.gpt
        x = g.tok(idx) + g.pos(pos)
        b, _, d = x.shape
        visible = torch.arange(self.k.shape[3], device=x.device) <= pos
        for i, blk in enumerate(g.blocks):
            q, k, v = blk.qkv(blk.ln1(x)).view(b, 1, 3, blk.heads, d // blk.heads).unbind(2)
            self.k[i].index_copy_(2, pos, k.transpose(1, 2))
            self.v[i].index_copy_(2, pos, v.transpose(1, 2))
            y = F.scaled_dot_product_attention(q.transpose(1, 2), self.k[i], self.v[i],
                                               attn_mask=visible)
            x = x + blk.proj(y.transpose(1, 2).reshape(b, 1, d))
            x = x + blk.fc2(F.gelu(blk.fc1(blk.ln2(x))))
        return g.head(g.norm(x))[:, -1]


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float) -> None:
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = x.float()
        y = y * torch.rsqrt(y.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * y.to(x.dtype)


def rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Rotary position embedding, the rotate-half form: x (B, H, T, D), cos/sin (T, D)."""
    x1, x2 = x.chunk(2, -1)
    return x * cos + torch.cat((-x2, x1), -1) * sin


class LlamaBlock(nn.Module):
    """Pre-norm decoder block: grouped-query attention with RoPE over a static KV cache (the
    k_cache and v_cache buffers, from Llama.reset_cache), SwiGLU."""

    def __init__(self, cfg: dict) -> None:
        super().__init__()
        dim, hd = cfg["dim"], cfg["dim"] // cfg["heads"]
        self.heads, self.kv_heads, self.hd = cfg["heads"], cfg["kv_heads"], hd
        self.norm1, self.norm2 = RMSNorm(dim, cfg["eps"]), RMSNorm(dim, cfg["eps"])
        self.q = nn.Linear(dim, self.heads * hd, bias=cfg["qkv_bias"])
        self.k = nn.Linear(dim, self.kv_heads * hd, bias=cfg["qkv_bias"])
        self.v = nn.Linear(dim, self.kv_heads * hd, bias=cfg["qkv_bias"])
        self.o = nn.Linear(self.heads * hd, dim, bias=False)
        self.gate = nn.Linear(dim, cfg["hidden"], bias=False)
        self.up = nn.Linear(dim, cfg["hidden"], bias=False)
        self.down = nn.Linear(cfg["hidden"], dim, bias=False)

    def forward(self, x, cos, sin, pos) -> torch.Tensor:
        """Tokens x (B, T, dim) at positions pos..pos+T-1 (pos an int), or one token (T = 1) at
        pos, a (1,) tensor: then the whole cache is attended under a mask of the positions up
        to pos, so every step has the same shapes (what graph replay captures once)."""
        b, t, _ = x.shape
        h = self.norm1(x)
        q = self.q(h).view(b, t, self.heads, self.hd).transpose(1, 2)
        k = self.k(h).view(b, t, self.kv_heads, self.hd).transpose(1, 2)
        v = self.v(h).view(b, t, self.kv_heads, self.hd).transpose(1, 2)
        q, k = rotate(q, cos, sin), rotate(k, cos, sin)
        mask, causal = None, False
        if isinstance(pos, torch.Tensor):
            self.k_cache.index_copy_(2, pos, k)
            self.v_cache.index_copy_(2, pos, v)
            keys, values = self.k_cache, self.v_cache
            mask = (torch.arange(keys.shape[2], device=x.device) <= pos)[None, :]  # (1, S)
        else:
            self.k_cache[:, :, pos:pos + t] = k
            self.v_cache[:, :, pos:pos + t] = v
            keys, values = self.k_cache[:, :, :pos + t], self.v_cache[:, :, :pos + t]
            causal = pos == 0 and t > 1
            if pos > 0 and t > 1:  # a chunk after earlier tokens: query i sees keys up to pos + i
                n = torch.arange(pos + t, device=x.device)
                mask = n[None, :] <= (pos + torch.arange(t, device=x.device))[:, None]
        y = F.scaled_dot_product_attention(q, keys, values, attn_mask=mask, is_causal=causal,
                                           enable_gqa=True)
        x = x + self.o(y.transpose(1, 2).reshape(b, t, -1))
        h = self.norm2(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


# Qwen2.5-0.5B's shape (494M parameters, tied embeddings), and a small one for CPU devices.
LLM_CONFIG = dict(vocab=151936, dim=896, layers=24, heads=14, kv_heads=2, hidden=4864,
                  eps=1e-6, rope_theta=1e6, qkv_bias=True, max_seq=4096)
LLM_SMALL_CONFIG = dict(vocab=512, dim=64, layers=2, heads=4, kv_heads=2, hidden=176,
                        eps=1e-6, rope_theta=1e4, qkv_bias=True, max_seq=256)
# SmolLM2-135M's configuration (tied embeddings, no projection biases), and a narrow two-layer one.
SMOLLM2_135M_CONFIG = dict(vocab=49152, dim=576, layers=30, heads=9, kv_heads=3, hidden=1536,
                           eps=1e-5, rope_theta=1e4, qkv_bias=False, max_seq=1024)
SMOLLM2_SMALL_CONFIG = dict(vocab=512, dim=64, layers=2, heads=4, kv_heads=2, hidden=128,
                            eps=1e-5, rope_theta=1e4, qkv_bias=False, max_seq=128)


class Llama(nn.Module):
    """A Llama-style decoder (RoPE, grouped-query attention, SwiGLU, RMSNorm) with random weights
    and a static KV cache: `forward(idx, pos)` runs tokens idx (B, T) at positions pos..pos+T-1,
    writes their keys and values into the cache and returns the logits of the last position
    (B, vocab), as generation uses them; pos may also be a (1,) tensor for one token per call
    (LlamaBlock.forward). Call `reset_cache(batch)` first; the caches are buffers, so `.to()`
    moves them with the weights."""

    def __init__(self, cfg: dict | None = None) -> None:
        super().__init__()
        self.cfg = cfg = dict(cfg or LLM_CONFIG)
        self.tok = nn.Embedding(cfg["vocab"], cfg["dim"])
        self.blocks = nn.ModuleList(LlamaBlock(cfg) for _ in range(cfg["layers"]))
        self.norm = RMSNorm(cfg["dim"], cfg["eps"])
        self.head = nn.Linear(cfg["dim"], cfg["vocab"], bias=False)
        self.head.weight = self.tok.weight  # tied, as Qwen2.5-0.5B
        for p in self.parameters():
            if p.dim() > 1:
                nn.init.normal_(p, std=0.02)
        hd = cfg["dim"] // cfg["heads"]
        inv = 1.0 / cfg["rope_theta"] ** (torch.arange(0, hd, 2, dtype=torch.float64) / hd)
        ang = torch.arange(cfg["max_seq"], dtype=torch.float64)[:, None] * inv[None, :]
        ang = torch.cat((ang, ang), -1)
        self.register_buffer("cos", ang.cos().float(), persistent=False)
        self.register_buffer("sin", ang.sin().float(), persistent=False)

    def reset_cache(self, batch: int) -> None:
        """A preallocated (batch, kv_heads, max_seq, head_dim) key and value cache per layer."""
        c, w = self.cfg, self.tok.weight
        shape = (batch, c["kv_heads"], c["max_seq"], c["dim"] // c["heads"])
        for blk in self.blocks:
            for name in ("k_cache", "v_cache"):
                blk.register_buffer(name, torch.zeros(shape, dtype=w.dtype, device=w.device),
                                    persistent=False)

    def forward(self, idx: torch.Tensor, pos: int | torch.Tensor = 0) -> torch.Tensor:
        t = idx.shape[1]
        x = self.tok(idx)
        at = pos if isinstance(pos, torch.Tensor) else slice(pos, pos + t)
        cos, sin = self.cos[at].to(x.dtype), self.sin[at].to(x.dtype)
        for blk in self.blocks:
            x = blk(x, cos, sin, pos)
        return self.head(self.norm(x[:, -1]))


def llama_decoder(cfg: dict, batch: int) -> Llama:
    """A Llama with its caches allocated, to be called as forward(idx (batch, 1), pos (1,))."""
    model = Llama(cfg)
    model.reset_cache(batch)
    return model


def greedy_decode(model: Llama, tok: torch.Tensor, pos: int, steps: int) -> torch.Tensor:
    """`steps` greedy tokens after token tok (B, 1) at position pos; the argmax stays on the
    device, so no step waits for the host. Returns the tokens, (B, steps)."""
    out = []
    for i in range(steps):
        tok = model(tok, pos + i).argmax(-1, keepdim=True)
        out.append(tok)
    return torch.cat(out, 1)


class UNetResBlock(nn.Module):
    """GroupNorm, SiLU, 3x3 convolution twice, with the time embedding added in between."""

    def __init__(self, cin: int, cout: int, temb: int) -> None:
        super().__init__()
        self.norm1, self.norm2 = nn.GroupNorm(32, cin), nn.GroupNorm(32, cout)
        self.conv1, self.conv2 = nn.Conv2d(cin, cout, 3, 1, 1), nn.Conv2d(cout, cout, 3, 1, 1)
        self.temb = nn.Linear(temb, cout)
        self.skip = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        h = self.conv1(F.silu(self.norm1(x))) + self.temb(t)[:, :, None, None]
        return self.skip(x) + self.conv2(F.silu(self.norm2(h)))


class UNetTransformer(nn.Module):
    """Stable Diffusion's spatial transformer: self-attention over the pixels, cross-attention to
    the text context, a GEGLU feed-forward; 8 heads."""

    def __init__(self, dim: int, context: int, heads: int = 8) -> None:
        super().__init__()
        self.heads = heads
        self.norm = nn.GroupNorm(32, dim)
        self.proj_in, self.proj_out = nn.Conv2d(dim, dim, 1), nn.Conv2d(dim, dim, 1)
        self.ln1, self.ln2, self.ln3 = nn.LayerNorm(dim), nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim, bias=False)
        self.q2 = nn.Linear(dim, dim, bias=False)
        self.kv2 = nn.Linear(context, 2 * dim, bias=False)
        self.out1, self.out2 = nn.Linear(dim, dim), nn.Linear(dim, dim)
        self.ff1, self.ff2 = nn.Linear(dim, 8 * dim), nn.Linear(4 * dim, dim)

    def attend(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        b, n, d = q.shape
        q, k, v = (z.view(b, -1, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        return F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(b, n, d)

    def forward(self, x: torch.Tensor, ctx: torch.Tensor) -> torch.Tensor:
        b, c, h, w = x.shape
        y = self.proj_in(self.norm(x)).flatten(2).transpose(1, 2)
        y = y + self.out1(self.attend(*self.qkv(self.ln1(y)).chunk(3, -1)))
        y = y + self.out2(self.attend(self.q2(self.ln2(y)), *self.kv2(ctx).chunk(2, -1)))
        a, gate = self.ff1(self.ln3(y)).chunk(2, -1)
        y = y + self.ff2(a * F.gelu(gate))
        return x + self.proj_out(y.transpose(1, 2).reshape(b, c, h, w))


class UNetStack(nn.Module):
    """A Stable-Diffusion-style UNet of three levels: ResNet blocks at every level, spatial
    transformers (self- and cross-attention) at the two lower ones (32x32 and 16x16 for a 64x64
    latent), skip connections from the down path to the up path. One call is one denoising
    step: (latent, timestep, text context) -> predicted noise."""

    def __init__(self, widths: tuple[int, int, int] = (320, 640, 1280), latent: int = 4,
                 context: int = 768) -> None:
        super().__init__()
        c0, c1, c2 = widths
        self.c0, temb = c0, 4 * c0
        self.time = nn.Sequential(nn.Linear(c0, temb), nn.SiLU(), nn.Linear(temb, temb))
        self.conv_in = nn.Conv2d(latent, c0, 3, 1, 1)
        self.down0 = UNetResBlock(c0, c0, temb)
        self.pool0, self.pool1 = nn.Conv2d(c0, c0, 3, 2, 1), nn.Conv2d(c1, c1, 3, 2, 1)
        self.down1, self.attn_d1 = UNetResBlock(c0, c1, temb), UNetTransformer(c1, context)
        self.down2, self.attn_d2 = UNetResBlock(c1, c2, temb), UNetTransformer(c2, context)
        self.mid1, self.attn_mid = UNetResBlock(c2, c2, temb), UNetTransformer(c2, context)
        self.mid2 = UNetResBlock(c2, c2, temb)
        self.up2, self.attn_u2 = UNetResBlock(2 * c2, c2, temb), UNetTransformer(c2, context)
        self.up1, self.attn_u1 = UNetResBlock(c2 + c1, c1, temb), UNetTransformer(c1, context)
        self.up0 = UNetResBlock(c1 + c0, c0, temb)
        self.upconv2, self.upconv1 = nn.Conv2d(c2, c2, 3, 1, 1), nn.Conv2d(c1, c1, 3, 1, 1)
        self.norm_out, self.conv_out = nn.GroupNorm(32, c0), nn.Conv2d(c0, latent, 3, 1, 1)

    def forward(self, x: torch.Tensor, step: torch.Tensor, ctx: torch.Tensor) -> torch.Tensor:
        half = self.c0 // 2
        freqs = torch.exp(torch.arange(half, device=x.device, dtype=torch.float32)
                          * (-9.210340371976184 / half))  # ln(10000): SD's sinusoidal embedding
        angles = step.float()[:, None] * freqs[None]
        t = self.time(torch.cat([angles.cos(), angles.sin()], -1).to(x.dtype))
        h0 = self.down0(self.conv_in(x), t)
        h1 = self.attn_d1(self.down1(self.pool0(h0), t), ctx)
        h2 = self.attn_d2(self.down2(self.pool1(h1), t), ctx)
        m = self.mid2(self.attn_mid(self.mid1(h2, t), ctx), t)
        u = self.attn_u2(self.up2(torch.cat([m, h2], 1), t), ctx)
        u = self.upconv2(F.interpolate(u, scale_factor=2.0, mode="nearest"))
        u = self.attn_u1(self.up1(torch.cat([u, h1], 1), t), ctx)
        u = self.upconv1(F.interpolate(u, scale_factor=2.0, mode="nearest"))
        u = self.up0(torch.cat([u, h0], 1), t)
        return self.conv_out(F.silu(self.norm_out(u)))

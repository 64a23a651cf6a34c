"""Packaging: the wheel installs into a fresh virtual environment and trains there with no CPU
fallback; a torch other than the one the extension was built against is a clear ImportError.

The wheel is built as `make wheel` builds it, with the shaders of this tree's build reused, in the
persistent build/wheel-<tag> tree (incremental after its first build)."""

import os
import shutil
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[3]


def _env_without_repo():
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    return env


def test_mismatched_torch_is_a_clear_import_error(tmp_path):
    pkg = tmp_path / "torch_vkml"
    shutil.copytree(ROOT / "torch_vkml", pkg, ignore=shutil.ignore_patterns("csrc", "_C*.so",
                                                                          "__pycache__"))
    (pkg / "_build_info.py").write_text('TORCH_VERSION = "2.0.1+cu118"\n')
    # An extension that cannot load: the version check must come first.
    (pkg / ("_C" + sysconfig.get_config_var("EXT_SUFFIX"))).write_bytes(b"not an ELF file")
    env = dict(_env_without_repo(), PYTHONPATH=str(tmp_path), TORCH_DEVICE_BACKEND_AUTOLOAD="0")
    r = subprocess.run([sys.executable, "-c", "import torch_vkml"], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode != 0
    last = r.stderr.strip().splitlines()[-1]
    want = "ImportError: torch_vkml was built against torch 2.0.1+cu118"
    assert last.startswith(want), r.stderr
    assert f"torch {torch.__version__} is installed" in last, r.stderr
    assert "ELF" not in r.stderr and "undefined symbol" not in r.stderr, r.stderr


def test_build_info_matches_running_torch():
    from torch_vkml import _build_info

    assert _build_info.TORCH_VERSION == torch.__version__


SMOKE = """
    import torch                          # loads torch_vkml through the torch.backends entry point

    assert torch._C._get_privateuse1_backend_name() == "vkml"
    import torch_vkml

    assert "site-packages" in torch_vkml.__file__, torch_vkml.__file__
    assert torch.vkml.device_count() >= 1 and torch.vkml.is_available()
    print("device", torch.vkml.get_device_properties(0).name)

    def step(device):
        torch.manual_seed(0)
        net = torch.nn.Sequential(torch.nn.Linear(10, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))
        net.to(device)
        opt = torch.optim.SGD(net.parameters(), lr=0.1)
        x, y = torch.randn(8, 10), torch.randint(0, 4, (8,))
        loss = torch.nn.functional.cross_entropy(net(x.to(device)), y.to(device))
        loss.backward()
        opt.step()
        return loss.item(), [p.detach().cpu() for p in net.parameters()]

    cpu_loss, cpu_params = step("cpu")
    loss, params = step("vkml")
    assert abs(loss - cpu_loss) < 1e-4, (loss, cpu_loss)
    for p, q in zip(params, cpu_params):
        torch.testing.assert_close(p, q, rtol=1e-4, atol=1e-5)
    assert torch_vkml.fallback_stats() == {}, torch_vkml.fallback_stats()
    print("ok")
"""


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("dist")
    shaders = ROOT / "build" / "shaders"
    args = [sys.executable, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps", "-q",
            "-w", str(out), str(ROOT)]
    if shaders.is_dir():
        args.insert(-1, f"--config-settings=cmake.define.VKML_SHADER_REUSE_DIR={shaders}")
    r = subprocess.run(args, capture_output=True, text=True, timeout=1800, cwd=ROOT)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
    wheels = list(out.glob("torch_vkml-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


@pytest.mark.wheel
def test_wheel_contents(wheel):
    import zipfile

    names = zipfile.ZipFile(wheel).namelist()
    assert any(n.startswith("torch_vkml/_C") and n.endswith(".so") for n in names), names
    assert "torch_vkml/_build_info.py" in names
    assert not [n for n in names if "/csrc/" in n or n.startswith(("tests/", "bench/"))], names
    entry = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    text = zipfile.ZipFile(wheel).read(entry).decode()
    assert "[torch.backends]" in text and "torch_vkml:_autoload" in text, text


@pytest.mark.wheel
def test_wheel_in_fresh_venv(wheel, tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    py = venv / "bin" / "python"
    site = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                          capture_output=True, text=True, check=True).stdout.strip()
    # This environment's torch, without installing another copy of it.
    torch_site = Path(torch.__file__).resolve().parents[1]
    (Path(site) / "host_torch.pth").write_text(str(torch_site) + "\n")
    r = subprocess.run([sys.executable, "-m", "pip", "--python", str(py), "install", "--no-deps",
                        "-q", str(wheel)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    r = subprocess.run([str(py), "-c", textwrap.dedent(SMOKE)], cwd=tmp_path, capture_output=True,
                       text=True, env=_env_without_repo(), timeout=600)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stdout + r.stderr

"""A device without fp64 arithmetic (VKML_CAPS_MASK=no-fp64, with the rest of the weakest mask of
docs/portability.md): every way of making a float64 or complex128 tensor on it raises a TypeError
naming the dtype and the device, and the ops whose float32 and integer kernels once declared fp64
(gathers and scatters, random draws, ranges, renorm) match the CPU with no validation message;
float64 from the host and from PyTorch's Python (printing, GradScaler) takes float32 paths, and the
results the CPU computes in double (arange, the scale update, a long product) are the CPU's.
Devices are probed once per process, so each case is a subprocess."""

import os
import subprocess
import sys

WEAKEST = dict(
    VKML_CAPS_MASK="no-coopmat,no-bf16,no-fp16,no-fp64,no-subgroup-arithmetic,"
                   "no-subgroup-size-control",
    VKML_CAPS_SHARED_MEMORY="16K",
    VKML_CAPS_WORKGROUP_COUNT="65535",
)

REFUSED = r"""
import torch
import torch_vkml

assert not torch_vkml.has_float64_support()
cases = {
    "zeros": lambda: torch.zeros(3, dtype=torch.float64, device="vkml"),
    "empty_strided": lambda: torch.empty_strided((2, 3), (1, 2), dtype=torch.float64,
                                                 device="vkml"),
    "to device": lambda: torch.ones(4, dtype=torch.float64).to("vkml"),
    "to dtype": lambda: torch.ones(4, device="vkml").double(),
    "arange": lambda: torch.arange(5, dtype=torch.float64, device="vkml"),
    "randn": lambda: torch.randn(5, dtype=torch.float64, device="vkml"),
    "full_like": lambda: torch.full_like(torch.ones(2, device="vkml"), 1.5, dtype=torch.float64),
    "complex128": lambda: torch.ones(2, dtype=torch.complex128).to("vkml"),
    "module": lambda: torch.nn.Linear(3, 2).double().to("vkml"),
}
for name, make in cases.items():
    try:
        make()
    except TypeError as e:
        print("REFUSED", name, "|", str(e).splitlines()[0])
    else:
        print("ALLOWED", name)
x = torch.ones(4, device="vkml")
print("FLOAT32", (x * 2.5).dtype, (x + torch.tensor(1.5, dtype=torch.float64)).dtype)
print("VALIDATION", torch_vkml._C.validation_message_count())
"""

# The ops of the index, random and shape (range) families and renorm, in float32, float16 and
# integer dtypes, against the CPU.
OPS = r"""
import torch
import torch.nn.functional as F
import torch_vkml

g = torch.Generator().manual_seed(0)
v = lambda t: t.to("vkml")
def same(got, want, tol=0.0):
    torch.testing.assert_close(got.cpu(), want, rtol=tol, atol=tol)

for dtype in (torch.float32, torch.float16, torch.int32, torch.int64, torch.uint8):
    src = (torch.randn(6, 9, generator=g) * 20).to(dtype)
    idx = torch.randint(0, 6, (11,), generator=g)
    same(torch.index_select(v(src), 0, v(idx)), torch.index_select(src, 0, idx))
    gi = torch.randint(0, 9, (6, 4), generator=g)
    same(torch.gather(v(src).t(), 0, v(gi).t()), torch.gather(src.t(), 0, gi.t()))
    upd = (torch.randn(11, 9, generator=g) * 4).to(dtype)
    want = src.clone().index_add_(0, idx, upd, alpha=3)
    same(v(src).index_add_(0, v(idx), v(upd), alpha=3), want, 1e-2 if dtype == torch.float16
         else 1e-5)
    want = src.clone().scatter_(1, gi, 7)
    same(v(src).scatter_(1, v(gi), 7), want)
    same(v(src)[v(idx) % 3], src[idx % 3])
same(F.one_hot(v(torch.tensor([3, 0, 2])), 5), F.one_hot(torch.tensor([3, 0, 2]), 5))
w = torch.randn(10, 4, generator=g)
same(F.embedding(v(torch.tensor([[1, 9], [4, 4]])), v(w)), w[torch.tensor([[1, 9], [4, 4]])])
same(torch.renorm(v(w), 2, 0, 1.5), torch.renorm(w, 2, 0, 1.5), 1e-6)
same(torch.renorm(v(w.half()), 1, 1, 2.0), torch.renorm(w.half(), 1, 1, 2.0), 2e-3)

for dtype in (torch.float32, torch.float16, torch.int16, torch.int64):
    same(torch.arange(-3, 40, 3, dtype=dtype, device="vkml"), torch.arange(-3, 40, 3, dtype=dtype))
    same(torch.linspace(-2, 9, 23, dtype=dtype, device="vkml"),
         torch.linspace(-2, 9, 23, dtype=dtype), 1e-2 if dtype == torch.float16 else 1e-6)
same(torch.arange(0.5, 4.0, 0.25, device="vkml"), torch.arange(0.5, 4.0, 0.25))
same(torch.logspace(-1, 2, 9, device="vkml"), torch.logspace(-1, 2, 9), 1e-5)

torch.vkml.manual_seed(3)
u = torch.empty(4096, device="vkml").uniform_(-2.0, 5.0).cpu()
assert u.min() >= -2.0 and u.max() < 5.0 and abs(u.mean() - 1.5) < 0.15, u
n = torch.randn(4096, device="vkml", dtype=torch.float16).float().cpu()
assert abs(n.mean()) < 0.1 and abs(n.std() - 1.0) < 0.1, (n.mean(), n.std())
e = torch.empty(4096, device="vkml").exponential_(2.0).cpu()
assert e.min() >= 0 and abs(e.mean() - 0.5) < 0.05, e.mean()
b = torch.empty(4096, device="vkml").bernoulli_(0.25).cpu()
assert set(b.unique().tolist()) <= {0.0, 1.0} and abs(b.mean() - 0.25) < 0.04, b.mean()
r = torch.randint(-4, 9, (4096,), device="vkml", dtype=torch.int32).cpu()
assert r.min() == -4 and r.max() == 8, (r.min(), r.max())
print("OPS OK")
print("VALIDATION", torch_vkml._C.validation_message_count())
"""

# Where float64 comes in from the host or from PyTorch's own Python: printing, copies from and to
# float64 host tensors, Python floats as complex and isin operands, GradScaler's inverse scale; and
# float32 results the CPU computes in double: arange, GradScaler's scale update, a long product.
WIDENED = r"""
import torch
import torch_vkml

x = torch.tensor([[1.5, -2.25e-3, float("inf")], [1e9, 0.0, float("nan")]])
assert repr(x.to("vkml")).replace(", device='vkml:0'", "") == repr(x), repr(x.to("vkml"))
host = torch.zeros(3, 2, dtype=torch.float64).t()
host.copy_(x.to("vkml"))
torch.testing.assert_close(host, x.double(), rtol=0, atol=0, equal_nan=True)
d = torch.randn(4, 5, dtype=torch.float64)
assert torch.equal(torch.empty(5, 4, device="vkml").t().copy_(d).cpu(), d.float())
z = torch.randn(6, dtype=torch.complex64)
assert torch.equal((z.to("vkml") * 2.5).cpu(), z * 2.5)
assert torch.equal((z.to("vkml") + 0.1).cpu(), z + 0.1)
t = torch.tensor([1.0, 2.5, 4.0], device="vkml")
assert torch.isin(2.5, t).item() and not torch.isin(3.0, t).item()

for start, step, n in [(0, 0.1, 1000), (-3.3, 0.7, 999), (1e6, 1 / 3, 5000), (0.5, -1e-3, 777)]:
    i = torch.arange(n, dtype=torch.float64)
    want = (torch.tensor(start, dtype=torch.float64) + torch.tensor(step, dtype=torch.float64) * i)
    got = torch.arange(start, start + step * n, step, device="vkml")[:n].cpu()
    assert torch.equal(got, want.float()), (start, step, (got - want.float()).abs().max())

sc, tc = torch.full((1,), 1000.0), torch.zeros(1, dtype=torch.int32)
sv, tv = sc.to("vkml"), tc.to("vkml")
for inf in [0, 1, 0, 0, 1, 1, 0, 0, 0]:
    fc = torch.full((1,), float(inf))
    torch._amp_update_scale_(sv, tv, fc.to("vkml"), 2.0, 0.3, 2)
    torch._amp_update_scale_(sc, tc, fc, 2.0, 0.3, 2)
    assert sv.item() == sc.item() and tv.item() == tc.item(), (sv.item(), sc.item())

grads = {}
for device in ("cpu", "vkml"):
    torch.manual_seed(1)
    layer = torch.nn.Linear(7, 3).to(device)
    opt = torch.optim.SGD(layer.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler(device, init_scale=3.0)  # its reciprocal rounds
    loss = layer(torch.linspace(-1, 1, 14).view(2, 7).to(device)).square().sum()
    scaler.scale(loss).backward()
    scaler.unscale_(opt)
    grads[device] = layer.weight.grad.cpu()
    scaler.step(opt)
    scaler.update()
torch.testing.assert_close(grads["vkml"], grads["cpu"], rtol=1e-6, atol=1e-7)

g = torch.Generator().manual_seed(2)
f = (1 + (torch.rand(1 << 20, generator=g, dtype=torch.float64) - 0.5) * 1e-6).float()
exact = f.double().prod().item()
assert abs(f.to("vkml").prod().item() - exact) <= 1e-6 * exact, (f.to("vkml").prod().item(), exact)
print("WIDENED OK")
print("VALIDATION", torch_vkml._C.validation_message_count())
"""


def run(script, **settings):
    env = dict(os.environ, **settings)
    env.setdefault("PYTHONPATH", os.getcwd())
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=600, env=env)


def test_float64_tensors_are_refused_with_a_type_error_naming_dtype_and_device():
    r = run(REFUSED, **WEAKEST)
    assert r.returncode == 0, r.stdout + r.stderr
    lines = [line for line in r.stdout.splitlines() if line.startswith(("REFUSED", "ALLOWED"))]
    assert len(lines) == 9 and all(line.startswith("REFUSED") for line in lines), r.stdout
    for line in lines:
        head, message = line.split(" | ", 1)
        dtype = "complex128" if head.endswith("complex128") else "float64"
        assert message.startswith("vkml: device vkml:0 ("), line
        assert f"has no fp64 arithmetic, so it cannot hold {dtype} tensors" in message, line
    assert "FLOAT32 torch.float32 torch.float32" in r.stdout, r.stdout
    assert "VALIDATION 0" in r.stdout, r.stdout + r.stderr


def test_index_random_range_and_renorm_kernels_need_no_fp64():
    r = run(OPS, VKML_VALIDATION="1", **WEAKEST)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "OPS OK" in r.stdout and "VALIDATION 0" in r.stdout, r.stdout + r.stderr


def test_float64_from_the_host_and_from_torch_python_takes_float32_paths():
    r = run(WIDENED, VKML_VALIDATION="1", **WEAKEST)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "WIDENED OK" in r.stdout and "VALIDATION 0" in r.stdout, r.stdout + r.stderr

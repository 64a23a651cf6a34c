"""Debug probe: CTC forward in float64 on the device vs CPU (log_alpha and nll)."""
import torch
import torch_vkml  # noqa: F401

torch.manual_seed(0)
T, N, C, S = 5, 2, 4, 2
lp = torch.randn(T, N, C, dtype=torch.float64).log_softmax(2)
tg = torch.randint(1, C, (N, S))
il, tl = [5, 4], [2, 1]
for dt in (torch.float32, torch.float64):
    ref = torch.ops.aten._ctc_loss(lp.to(dt), tg, il, tl, 0, False)
    got = torch.ops.aten._ctc_loss(lp.to(dt).to("vkml"), tg.to("vkml"), il, tl, 0, False)
    print(dt, "nll ref", ref[0].tolist(), "got", got[0].cpu().tolist())
    print(" alpha ref", ref[1][0, :3].tolist())
    print(" alpha got", got[1][0, :3].cpu().tolist())
x = torch.randn(7, dtype=torch.float64)
print("log f64", (x.abs().to("vkml").log().cpu() - x.abs().log()).abs().max().item())
print("bce f64", torch.nn.functional.binary_cross_entropy(x.sigmoid().to("vkml"), x.sigmoid().to("vkml")).item(),
      torch.nn.functional.binary_cross_entropy(x.sigmoid(), x.sigmoid()).item())

"""matrix_exp on OpInfo's fp16 samples: NaN counts on the CPU, vkml and CUDA, and the float64 size
(the OpInfo guard failed on an H200 with NaN in every element)."""
import torch
import torch_vkml  # noqa: F401
from torch.testing._internal.common_methods_invocations import op_db

op = next(o for o in op_db if o.name == "matrix_exp")
for s in list(op.sample_inputs("cpu", torch.float16))[:4]:
    x = s.input
    ref = torch.linalg.matrix_exp(x.double())
    outs = {"cpu": torch.linalg.matrix_exp(x), "vkml": torch.linalg.matrix_exp(x.to("vkml")).cpu(),
            "vkml_f32": torch.linalg.matrix_exp(x.float().to("vkml")).cpu()}
    if torch.cuda.is_available():
        outs["cuda"] = torch.linalg.matrix_exp(x.cuda()).cpu()
    line = " ".join(f"{k}: nan {v.isnan().sum().item()} inf {v.isinf().sum().item()}"
                    for k, v in outs.items())
    print(tuple(x.shape), f"|x|max {x.abs().max().item():.3g} |exp|max {ref.abs().max().item():.3g}", line)

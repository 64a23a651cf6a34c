"""CI guard over the OpInfo verdict: every (op, dtype) recorded as `pass` in
tests/torch/opinfo/status.json must still pass. `make opinfo` regenerates the file."""

import json
from pathlib import Path

import pytest
from torch.testing._internal.common_methods_invocations import op_db

import opinfo_check as oc

STATUS = json.loads((Path(__file__).parent / "opinfo/status.json").read_text())
OPS = {oc.op_key(op): op for op in op_db}
DTYPES = {name: d for d, name in oc.DTYPE_NAMES.items()}
PASSING = sorted((op, dt) for op, per in STATUS.items() for dt, e in per.items()
                 if e["status"] == "pass" and op in OPS and dt in DTYPES)


def test_status_file_covers_op_db():
    assert len(STATUS) >= len(OPS) * 0.9, "status.json is stale: run `make opinfo`"
    assert PASSING, "no passing (op, dtype) recorded"


@pytest.mark.parametrize("op_name,dtype_name", PASSING)
def test_still_passes(op_name, dtype_name):
    status, reason = oc.check(OPS[op_name], DTYPES[dtype_name], max_samples=4)
    assert status == "pass", reason

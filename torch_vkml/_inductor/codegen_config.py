"""Inductor settings of the vkml backend. They enter Inductor's FX-graph cache key, so output code
cached by one version of the generator is never reused by another."""

import hashlib as _hashlib
import os as _os
import sys as _sys

from torch.utils._config_module import install_config_module as _install

_dir = _os.path.dirname(_os.path.abspath(__file__))
_h = _hashlib.sha256()
for _name in sorted(_os.listdir(_dir)):
    if _name.endswith(".py"):
        with open(_os.path.join(_dir, _name), "rb") as _f:
            _h.update(_name.encode() + _f.read())

# Hash of the code generator's sources.
generator_hash: str = _h.hexdigest()[:24]
del _h, _f

_install(_sys.modules[__name__])

"""ONNX Runtime's symbolic shape inference module, loaded straight from its file.

``import onnxruntime.tools.symbolic_shape_infer`` runs two package ``__init__``
files first: onnxruntime's (its C++ runtime) and ``onnxruntime.tools``' (which
imports torch whenever torch is installed: 1-2 s for every PyTorch user). The
module itself needs neither; it imports only numpy, onnx, sympy and packaging.
"""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path
from types import ModuleType

# The module's own name, so that its logger keeps the name ONNX Runtime gives it.
MODULE_NAME = "onnxruntime.tools.symbolic_shape_infer"


@functools.cache
def symbolic_shape_infer() -> ModuleType:
    """The module, executed once without its packages (not registered in ``sys.modules``).

    Raises ``ImportError`` when onnxruntime or sympy is missing.
    """
    package = importlib.util.find_spec("onnxruntime")  # locates the package without importing it
    folders = list(package.submodule_search_locations or []) if package is not None else []
    source = next((Path(f, "tools", "symbolic_shape_infer.py") for f in folders
                   if Path(f, "tools", "symbolic_shape_infer.py").is_file()), None)
    if source is None:
        raise ImportError("onnxruntime (with its tools/symbolic_shape_infer.py) is not installed")
    spec = importlib.util.spec_from_file_location(MODULE_NAME, source)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {source}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module

"""onnx-lint: find and safely fix stale shapes and missing types in ONNX models.

The Python API (``check``, ``fix``, ``quantize``) runs what the command line runs, on an
``onnx.ModelProto`` or a model file::

    import onnx_lint

    report = onnx_lint.check("model.onnx")
    fixed = onnx_lint.fix(model)              # a new ModelProto; ``model`` is not changed
    onnx_lint.quantize(fixed.model, "model.int8-fp16.onnx", calibration_data="calib.npz")

Importing this package imports neither onnx nor onnxruntime; each function does when called.
"""

from typing import TYPE_CHECKING, Any

from onnx_lint.base.errors import FixError, ModelLoadError, OnnxLintError
from onnx_lint.base.version import __version__
from onnx_lint.lint.diagnostics import Diagnostic, Fix, Location, Severity

if TYPE_CHECKING:
    from onnx_lint.api import FixResult, Report, check, fix, quantize

# Loaded on first use: the command line imports this package but never the API module.
_API = frozenset({"FixResult", "Report", "check", "fix", "quantize"})


def __getattr__(name: str) -> Any:
    if name in _API:
        from onnx_lint import api

        return getattr(api, name)
    raise AttributeError(f"module 'onnx_lint' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | _API)


__all__ = [
    "Diagnostic",
    "Fix",
    "FixError",
    "FixResult",
    "Location",
    "ModelLoadError",
    "OnnxLintError",
    "Report",
    "Severity",
    "__version__",
    "check",
    "fix",
    "quantize",
]

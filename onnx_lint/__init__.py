"""onnx-lint: find and safely fix stale shapes and missing types in ONNX models.

The Python API (``check``, ``fix``, ``quantize``) runs what the command line runs, on an
``onnx.ModelProto`` or a model file::

    import onnx_lint

    report = onnx_lint.check("model.onnx")
    fixed = onnx_lint.fix(model)              # a new ModelProto; ``model`` is not changed
    onnx_lint.quantize(fixed.model, "model.int8-fp16.onnx", calibration_data="calib.npz")

Importing this package imports neither onnx nor onnxruntime; each function does when called.
"""

from onnx_lint.api import FixResult, Report, check, fix, quantize  # noqa: E402
from onnx_lint.base.errors import FixError, ModelLoadError, OnnxLintError  # noqa: E402
from onnx_lint.base.version import __version__  # noqa: E402
from onnx_lint.lint.diagnostics import Diagnostic, Fix, Location, Severity  # noqa: E402

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

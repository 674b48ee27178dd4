"""The Python API: ``check``, ``fix`` and ``quantize`` on an ``onnx.ModelProto`` or a model file.

Each function runs the same code as the command line: ``check`` lints as ``onnx-lint check``
does, ``fix`` plans, proves and writes through the path ``check --fix`` uses, ``quantize`` runs
the ``onnx-lint quantize`` pipeline. Nothing here imports onnx or onnxruntime until a function
is called, so ``import onnx_lint`` stays cheap.

A model in memory is linted from a private temporary copy of its bytes: the engines that run
the model or the checker read a file. A model whose tensors live in external data needs
``base_path``, the folder its external references are relative to; the temporary copy is then
made in that folder (a hidden ``.onnx-lint-*.onnx`` file, removed when the call returns).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

from onnx_lint.base.errors import OnnxLintError
from onnx_lint.lint.diagnostics import Diagnostic

if TYPE_CHECKING:
    import onnx

    from onnx_lint.quantization.pipeline import QuantizeReport

ModelOrPath: TypeAlias = "onnx.ModelProto | str | os.PathLike[str]"
Selectors: TypeAlias = "str | Iterable[str] | None"

IN_MEMORY = "<in-memory model>"  # the ``file`` of a diagnostic about a model passed in memory


@dataclass(frozen=True)
class Report:
    """What ``check`` found in one model.

    ``diagnostics`` are the immutable records ``--output-format json`` prints (``to_json``
    gives exactly that list); ``notes`` are the engines' remarks that are not findings.
    """

    file: str
    diagnostics: tuple[Diagnostic, ...]
    notes: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        """True when no error or warning remains (info notes do not count), as exit code 0 means."""
        return not any(d.severity.fails and not d.fix_applied for d in self.diagnostics)

    def to_json(self) -> list[dict[str, Any]]:
        """The diagnostics as ``onnx-lint check --output-format json`` prints them."""
        return [d.to_json() for d in self.diagnostics]


@dataclass(frozen=True)
class FixResult:
    """What ``fix`` did.

    ``model`` is a new ``ModelProto`` (the fixed one, or a copy of the original when nothing
    changed: the caller's object is never mutated); ``diagnostics`` lists the fixed findings
    (``fix.applied`` set) and what the re-lint of the fixed model still finds; ``modified``
    says whether anything changed (and, for a path, whether the file was rewritten).
    """

    model: onnx.ModelProto
    diagnostics: tuple[Diagnostic, ...]
    modified: bool
    notes: tuple[str, ...] = ()


def check(model_or_path: ModelOrPath, *, select: Selectors = None, ignore: Selectors = None,
          runtime_probe: bool = True, base_path: str | os.PathLike[str] | None = None) -> Report:
    """Lint a model, as ``onnx-lint check`` does.

    ``select``/``ignore`` take rule codes or prefixes (``"OL0"``, ``["OL001", "OL2"]``) with the
    command line's meaning; the default runs every rule. An unreadable model is reported as one
    ``OL000`` diagnostic, as on the command line. ``runtime_probe=False`` never runs the model in
    ONNX Runtime. Raises ``OnnxLintError`` for an unknown selector or an internal error.
    """
    from onnx_lint.lint.linter import lint_file
    from onnx_lint.rules import ALL_RULES

    enabled = _enabled(select, ignore)
    with _model_file(model_or_path, base_path) as (path, display):
        result, _ctx = lint_file(path, display, ALL_RULES, enabled, runtime_probe=runtime_probe)
    _raise_internal(result.internal_errors)
    return Report(display, tuple(result.diagnostics), tuple(result.notes))


def fix(model_or_path: ModelOrPath, *, select: Selectors = None, ignore: Selectors = None,
        runtime_check: bool = True, runtime_probe: bool = True,
        base_path: str | os.PathLike[str] | None = None) -> FixResult:
    """Apply the safe fixes, as ``onnx-lint check --fix`` does, and return the fixed model.

    The fixed model is proven first (re-lint, full checker, ONNX Runtime load unless
    ``runtime_check=False``). A path is rewritten atomically, and only when something changed;
    a ``ModelProto`` is never mutated: the result holds a new one. Raises ``FixError`` when the
    proof fails (nothing written), ``ModelLoadError`` when the model cannot be read.
    """
    import onnx

    from onnx_lint.base.errors import ModelLoadError
    from onnx_lint.fixes.session import FixSession
    from onnx_lint.lint.file_result import is_unreadable
    from onnx_lint.rules import ALL_RULES

    enabled = _enabled(select, ignore)
    with _model_file(model_or_path, base_path) as (path, display):
        session = FixSession.lint(path, display, ALL_RULES, enabled, runtime_probe=runtime_probe)
        result, ctx = session.result, session.ctx
        _raise_internal(result.internal_errors)
        if ctx is None:
            problem = next((d.message for d in result.diagnostics if is_unreadable(d)), "cannot be read")
            raise ModelLoadError(display, problem)
        plan = session.fix(runtime_check=runtime_check)
    model = onnx.ModelProto.FromString(plan.data) if plan is not None else ctx.loaded.fresh_copy()
    return FixResult(model, tuple(result.diagnostics), plan is not None, tuple(result.notes))


def quantize(model_or_path: ModelOrPath, output: str | os.PathLike[str], *,
             calibration_data: str | os.PathLike[str] | Sequence[Mapping[str, Any]] | None = None,
             calibration_method: str = "auto", op_types: Sequence[str] | None = None,
             exclude_nodes: Sequence[str] = (), per_channel: bool = True, keep_io_types: bool = True,
             input_shapes: Mapping[str, Sequence[int]] | None = None, samples: int = 8,
             validation_samples: int = 16, min_cosine: float | None = None, fallback_seconds: float = 300.0,
             output_qdq: bool = False, int8_output_layers: bool = False, int8_small_layers: bool = False,
             force: bool = False, base_path: str | os.PathLike[str] | None = None,
             target: str = "onnxruntime", sensitivity_seconds: float = 120.0) -> QuantizeReport:
    """Repair, then quantize to INT8 (Q/DQ) + FP16 and validate, as ``onnx-lint quantize`` does.

    ``calibration_data`` is a ``.npz`` (keys are input names) or ``.npy`` file, or the samples
    themselves (one mapping of input name to array per sample); without it the model is
    calibrated on random inputs and the report's warnings say the accuracy figures are then
    meaningless. The keyword arguments are the command line's options (``target``: ``onnxruntime`` or
    ``tensorrt``; ``sensitivity_seconds``: ``--sensitivity-time``). The returned report is
    the one the command prints (``written`` is False when ``min_cosine`` was missed: nothing was
    written); a failure raises ``QuantizeError`` (an ``OnnxLintError``) and writes nothing. An existing
    ``output`` is refused unless ``force``.
    Needs ONNX Runtime (``pip install 'onnx-lint[runtime]'``).
    """
    from onnx_lint.base.progress import Progress
    from onnx_lint.quantization.from_file import RANDOM_WARNING, quantize_file
    from onnx_lint.quantization.pipeline import QuantizeError, QuantizeOptions

    options = QuantizeOptions(calibration_method, tuple(op_types) if op_types else None, tuple(exclude_nodes),
                              per_channel, keep_io_types, max(0, validation_samples), min_cosine,
                              max(0.0, fallback_seconds), output_qdq, int8_output_layers, int8_small_layers,
                              force=force, target=target, sensitivity_seconds=max(0.0, sensitivity_seconds))
    data = calibration_data if not isinstance(calibration_data, (str, os.PathLike)) else Path(calibration_data)
    shapes = {name: tuple(int(d) for d in dims) for name, dims in (input_shapes or {}).items()}
    written = Path(output)
    with _model_file(model_or_path, base_path) as (path, display):
        if written.resolve() == path.resolve():
            raise QuantizeError("the output must be a new file; the input model is never changed")
        in_memory = not isinstance(model_or_path, (str, os.PathLike))  # then path is a temporary copy
        report, random = quantize_file(path, written, data, shapes, samples, options, Progress(),
                                       source_name=display if in_memory else None)
    report.model = display
    for record in report.fixes:  # a model given in memory was read from a temporary copy
        record["file"] = display
    if random:
        report.warnings.insert(0, RANDOM_WARNING)
    return report


def _enabled(select: Selectors, ignore: Selectors):
    """The rule filter for ``select``/``ignore``, with the command line's semantics (and its errors)."""
    from onnx_lint.lint.config import Settings, merge_cli
    from onnx_lint.rules import CODES

    settings = merge_cli(Settings(), select=_codes(select), ignore=_codes(ignore))
    settings.check_selectors(CODES)
    chosen = frozenset(c for c in CODES if settings.enabled(c, CODES, CODES))
    return chosen.__contains__


def _codes(selectors: Selectors) -> tuple[str, ...] | None:
    if selectors is None:
        return None
    items = selectors.split(",") if isinstance(selectors, str) else selectors
    return tuple(s.strip().upper() for s in items if s.strip())


def _raise_internal(errors: list[str]) -> None:
    if errors:
        raise OnnxLintError("; ".join(errors))


@contextmanager
def _model_file(model_or_path: ModelOrPath, base_path: str | os.PathLike[str] | None) -> Iterator[tuple[Path, str]]:
    """The file to work on and the name diagnostics show: a path as given, or a temporary copy of a ModelProto."""
    if isinstance(model_or_path, (str, os.PathLike)):
        yield Path(model_or_path), os.fspath(model_or_path)
        return
    import onnx

    if not isinstance(model_or_path, onnx.ModelProto):
        raise TypeError(f"expected an onnx.ModelProto or a path, not {type(model_or_path).__name__}")
    try:
        data = model_or_path.SerializeToString()
    except ValueError as exc:  # protobuf's 2 GiB limit
        raise OnnxLintError(f"the model cannot be serialized ({exc}); save it with external data "
                            "and pass its path") from None
    if base_path is None and _has_external_data(model_or_path):
        raise OnnxLintError("the model keeps tensors in external data: pass base_path, the folder its "
                            "external data files are in")
    if base_path is not None:
        handle, name = tempfile.mkstemp(prefix=".onnx-lint-", suffix=".onnx", dir=base_path)
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(data)
            yield Path(name), IN_MEMORY
        finally:
            Path(name).unlink(missing_ok=True)
        return
    with tempfile.TemporaryDirectory(prefix="onnx-lint-") as folder:
        path = Path(folder, "model.onnx")
        path.write_bytes(data)
        yield path, IN_MEMORY


def _has_external_data(model: onnx.ModelProto) -> bool:
    import onnx

    from onnx_lint.model.graphs import iter_scopes
    from onnx_lint.model.validate import iter_tensors

    return any(tensor.data_location == onnx.TensorProto.EXTERNAL
               for _kind, tensor in iter_tensors(list(iter_scopes(model))))

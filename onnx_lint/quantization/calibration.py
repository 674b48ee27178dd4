"""Calibration samples: from a .npz/.npy file, cut along the batch axis in the model's batch, or random.

Random samples make calibration possible on any float-input model, but the
accuracy figures they produce only say that the pipeline works, not that the
quantized model is accurate: callers must say so loudly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx

from onnx_lint.base.errors import OnnxLintError
from onnx_lint.model.shapes import Dim, tensor_info
from onnx_lint.quantization.calibration_files import MAX_CALIBRATION_BYTES, read_arrays

# Dynamic dims of random samples: the first (batch) axis gets 1, every other one 32.
DEFAULT_BATCH = 1
DEFAULT_DYNAMIC_DIM = 32
DEFAULT_RANDOM_SAMPLES = 8

Sample = dict[str, np.ndarray]


class CalibrationError(OnnxLintError):
    """The calibration data cannot be used with this model."""


@dataclass(frozen=True)
class InputSpec:
    """A graph input that needs data: name, numpy dtype, declared dims."""

    name: str
    dtype: np.dtype
    dims: tuple[Dim, ...]

    @property
    def is_float(self) -> bool:
        return np.issubdtype(self.dtype, np.floating)


def input_specs(model: onnx.ModelProto) -> list[InputSpec]:
    initializers = {i.name for i in model.graph.initializer}
    specs = []
    for value in model.graph.input:
        if value.name in initializers:
            continue
        info = tensor_info(value.type)
        if info is None or not info.elem_type:
            raise CalibrationError(f"graph input '{value.name}' is not a typed tensor; cannot feed it")
        dtype = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(info.elem_type))
        specs.append(InputSpec(value.name, dtype, info.dims or ()))
    return specs


def parse_input_shape(text: str) -> tuple[str, tuple[int, ...]]:
    """``name=1x3x224x224`` -> ("name", (1, 3, 224, 224))."""
    name, sep, dims = text.rpartition("=")
    if not sep or not name:
        raise CalibrationError(f"--input-shape '{text}' must look like name=1x3x224x224")
    try:
        shape = tuple(int(d) for d in dims.lower().split("x"))
    except ValueError:
        raise CalibrationError(f"--input-shape '{text}': dims must be integers separated by 'x'") from None
    if any(d <= 0 for d in shape):
        raise CalibrationError(f"--input-shape '{text}': dims must be positive")
    return name, shape


def _fixed(dim: Dim) -> int | None:
    """A dim the model pins (a positive integer); ``-1``, 0, symbols and unknowns are free."""
    return dim if isinstance(dim, int) and dim > 0 else None


def concrete_shape(spec: InputSpec, override: tuple[int, ...] | None) -> tuple[int, ...]:
    if override is not None:
        if len(override) != len(spec.dims):
            raise CalibrationError(f"--input-shape for '{spec.name}' has rank {len(override)}, "
                                   f"the model declares rank {len(spec.dims)}")
        for want, got in zip(spec.dims, override):
            if _fixed(want) is not None and want != got:
                raise CalibrationError(f"--input-shape for '{spec.name}' gives {got} where the model "
                                       f"declares {want}")
        return override
    return tuple(_fixed(d) or (DEFAULT_BATCH if i == 0 else DEFAULT_DYNAMIC_DIM) for i, d in enumerate(spec.dims))


def batch_of(spec: InputSpec) -> int:
    """Rows per sample: the model's fixed batch (axis 0) when it pins one above 1, else 1."""
    return _fixed(spec.dims[0]) or 1 if spec.dims else 1


def random_samples(specs: list[InputSpec], overrides: dict[str, tuple[int, ...]],
                   count: int = DEFAULT_RANDOM_SAMPLES, seed: int = 0) -> list[Sample]:
    """Standard-normal samples of the declared shapes; integer inputs need real data."""
    integer = [s.name for s in specs if not s.is_float]
    if integer:
        raise CalibrationError(
            f"input{'s' if len(integer) > 1 else ''} {', '.join(repr(n) for n in integer)} "
            f"{'are' if len(integer) > 1 else 'is'} not floating point (token ids, indices, masks): random values "
            "would be meaningless "
            "or out of range; pass real samples with --calibration-data")
    unknown = set(overrides) - {s.name for s in specs}
    if unknown:
        raise CalibrationError(f"--input-shape names no graph input: {', '.join(sorted(unknown))}")
    rng = np.random.default_rng(seed)
    shapes = {s.name: concrete_shape(s, overrides.get(s.name)) for s in specs}
    total = count * sum(math.prod(shapes[s.name]) * s.dtype.itemsize for s in specs)
    if total > MAX_CALIBRATION_BYTES:
        raise CalibrationError(f"{count} random samples of {', '.join(f'{n}{list(v)}' for n, v in shapes.items())} "
                               f"would take {total / 2**30:.1f} GiB; calibration data is limited to "
                               f"{MAX_CALIBRATION_BYTES / 2**30:.0f} GiB (ask for fewer samples)")
    return [{s.name: rng.standard_normal(shapes[s.name]).astype(s.dtype) for s in specs} for _ in range(count)]


def load_samples(path: Path, specs: list[InputSpec]) -> list[Sample]:
    """Samples from ``.npz`` (keys are input names) or ``.npy`` (single-input models).

    Rows are taken as many at a time as the model's batch holds: a model pinned to
    batch 3 cannot run a batch-1 sample, so 48 rows become 16 samples of 3 (rows
    left over after the last whole batch are not used).
    """
    found, kind = read_arrays(path)
    if kind == "npz":
        arrays = found
    elif len(specs) != 1:
        raise CalibrationError(f"{path}: a .npy file feeds a single-input model; this model has "
                               f"{len(specs)} inputs ({', '.join(s.name for s in specs)}): use .npz")
    else:
        arrays = {specs[0].name: found[""]}
    names = {s.name for s in specs}
    missing = sorted(names - set(arrays))
    if missing:
        raise CalibrationError(f"{path}: no array for input{'s' if len(missing) > 1 else ''} "
                               f"{', '.join(missing)} (keys: {', '.join(sorted(arrays)) or 'none'})")
    rows = {name: arrays[name].shape[0] if arrays[name].ndim else 0 for name in names}
    if len(set(rows.values())) != 1 or 0 in rows.values():
        raise CalibrationError(f"{path}: every input needs the same, non-zero number of samples "
                               f"along axis 0 (found {rows})")
    for spec in specs:
        array = arrays[spec.name]
        if array.ndim != len(spec.dims):
            raise CalibrationError(f"{path}: '{spec.name}' has rank {array.ndim}, the model declares "
                                   f"rank {len(spec.dims)} (samples are split along axis 0 and keep it)")
        for axis, (want, got) in enumerate(zip(spec.dims, array.shape)):
            if axis and _fixed(want) is not None and want != got:
                raise CalibrationError(f"{path}: '{spec.name}' dim {axis} is {got}, the model declares {want}")
        if spec.is_float and not np.issubdtype(array.dtype, np.floating):
            raise CalibrationError(f"{path}: '{spec.name}' is {array.dtype}, the model expects {spec.dtype}")
    total = next(iter(rows.values()))
    batch = {s.name: batch_of(s) for s in specs}
    count = min(total // b for b in batch.values())
    if count == 0:
        fixed = max(batch.values())
        raise CalibrationError(f"{path}: {total} rows, but the model's batch is fixed at {fixed}: "
                               f"give at least {fixed} rows")
    return [{s.name: np.ascontiguousarray(arrays[s.name][i * batch[s.name]:(i + 1) * batch[s.name]])
             .astype(s.dtype, copy=False) for s in specs} for i in range(count)]


def calibration_inputs(model: onnx.ModelProto, data: Path | None, input_shapes: dict[str, tuple[int, ...]],
                       count: int = DEFAULT_RANDOM_SAMPLES) -> tuple[list[Sample], dict]:
    """The calibration samples and the report's description of them (CLI and server alike)."""
    specs = input_specs(model)
    if data is not None:
        samples = load_samples(data, specs)
        batch = max(batch_of(s) for s in specs)
        described = {"source": str(data), "samples": len(samples), "random": False}
        if batch > 1:
            described["batch"] = batch  # the model's fixed batch: each sample holds that many rows
        return samples, described
    samples = random_samples(specs, input_shapes, count=max(1, count))
    return samples, {"source": "random inputs", "samples": len(samples), "random": True,
                     "shapes": {name: list(a.shape) for name, a in samples[0].items()}}

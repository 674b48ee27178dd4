"""Calibration: the activation ranges, computed once and kept in a cache file.

ONNX Runtime's ``quantize_static`` calibrates and quantizes in one call, so every
re-quantization (nodes moved out of INT8 for a default-level load or for an
accuracy target) would calibrate again. Calibrating here, with the cache file
that ``quantize_static(calibration_cache_path=...)`` reads, makes re-quantizing
cheap. It also fixes ORT's entropy default: with 128 histogram bins and 128
quantized bins its KL search has a single candidate (the whole range), so
entropy gave byte-identical models to MinMax; 512 bins give it 193 candidates.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import onnx

from onnx_lint.base.progress import Progress
from onnx_lint.quantization.calibration import Sample
from onnx_lint.quantization.entropy import use_fast_collector
from onnx_lint.quantization.quiet import quiet

ENTROPY_BINS = 512  # KL candidates = bins/2 - 128/2 + 1; 2048 (TensorRT's) costs ~4x the time
QUANTIZED_BINS = 128


@contextlib.contextmanager
def quiet_onnxruntime() -> Iterator[None]:
    """Keep ORT's quantization tools off the user's terminal, for this thread only (``quiet.py``): their prints
    and their Python logging. Their C++ log stays quiet through the sessions' own options (the calibrator's
    ``_quiet_session``, validation's children): ORT's default logger severity is the process's, so it is not
    changed."""
    with quiet():
        yield


def _reader(samples: list[Sample], progress: Progress):  # noqa: ANN202 - ORT's interface
    from onnxruntime.quantization import CalibrationDataReader

    class Reader(CalibrationDataReader):
        def __init__(self) -> None:
            self._items = iter(samples)

        def get_next(self):  # noqa: ANN202 - ORT's interface
            progress.check()
            item = next(self._items, None)
            if item is not None:
                progress.advance()
            return item

    return Reader()


AUTO_METHODS = ("minmax", "entropy")  # what ``auto`` tries; on a tie the first (cheaper to explain) wins
# For symmetric activations (``--target tensorrt``) ``auto`` also tries percentile ranges: a zero-point of 0
# spends half the levels of a ReLU output, and clipping its rare outliers buys them back (mtcnn onet, held
# out: minmax 0.999561, percentile 0.999645, ModelOpt 0.999597).
AUTO_METHODS_SYMMETRIC = ("minmax", "entropy", "percentile")
PERCENTILE = 99.999  # ORT's default


class _Recording:
    """The calibration session, keeping the graph outputs of the first ``count`` samples: the FP32
    reference that validation compares with, without running the FP32 model a second time."""

    def __init__(self, session, outputs: list[str], count: int) -> None:  # noqa: ANN001 - ORT's session
        self._session, self._outputs, self._count = session, outputs, count
        self.recorded: dict[str, list[np.ndarray]] = {name: [] for name in outputs}
        self.runs = 0

    def run(self, names, feed, *args, **kwargs):  # noqa: ANN001, ANN201 - ORT's interface
        results = self._session.run(names, feed, *args, **kwargs)
        if names is None and self.runs < self._count:
            produced = [o.name for o in self._session.get_outputs()]
            for name, value in zip(produced, results):
                if name in self.recorded:
                    self.recorded[name].append(np.array(value, copy=True))
        self.runs += 1
        return results

    def __getattr__(self, name: str):  # noqa: ANN204 - everything else is the session's
        return getattr(self._session, name)


def _calibrator(fp32: Path, op_types: list[str], work: Path, method: str, external_data: bool,
                wanted: frozenset[str] | None):  # noqa: ANN202 - ORT's calibrator
    """ORT's calibrator for ``method``, as ``create_calibrator`` makes it with our settings, but of a subclass
    of its own: it calibrates only the ``wanted`` tensors (None: what ORT selects) and its session logs only
    errors. Nothing of ORT's classes is changed, so another run in the same process calibrates as ORT does."""
    import onnxruntime as ort
    from onnxruntime.quantization.calibrate import EntropyCalibrater, MinMaxCalibrater, PercentileCalibrater

    bases: dict[str, tuple[type, dict[str, Any]]] = {
        "entropy": (EntropyCalibrater, {"symmetric": False, "num_bins": ENTROPY_BINS,
                                        "num_quantized_bins": QUANTIZED_BINS}),
             "minmax": (MinMaxCalibrater, {"symmetric": False, "moving_average": False, "averaging_constant": 0.01,
                                           "max_intermediate_outputs": None, "per_channel": False}),
             "percentile": (PercentileCalibrater, {"symmetric": True, "num_bins": 2048, "percentile": 99.999})}
    base, settings = bases[method]

    class Selective(base):  # type: ignore[misc, valid-type]  # ORT's calibrator classes are untyped
        def select_tensors_to_calibrate(self, model):  # noqa: ANN001, ANN202 - ORT's interface
            tensors, value_infos = super().select_tensors_to_calibrate(model)
            return (tensors if wanted is None else {t for t in tensors if t in wanted}), value_infos

        def create_inference_session(self) -> None:
            options = ort.SessionOptions()
            options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
            options.log_severity_level = 3
            self.infer_session = ort.InferenceSession(self.augmented_model_path, sess_options=options,
                                                      providers=self.execution_providers)

    calibrator = Selective(str(fp32), op_types, str(work / "ranges.aug.onnx"),
                           use_external_data_format=external_data, **settings)
    calibrator.augment_graph()
    calibrator.create_inference_session()
    return calibrator


def read_by_quantizer(model_path: Path, op_types: list[str]) -> frozenset[str]:
    """The activations whose ranges ``quantize_static`` reads when Q/DQ go on op inputs only: the inputs of
    the op types it quantizes, and the outputs of the Relu/Clip among them (ORT gives a Relu's input the range
    of its output). ORT calibrates every input and output of those ops; an output that no quantized op reads
    (a Conv's, feeding an activation) only cost histogram and entropy time."""
    model = onnx.load(str(model_path), load_external_data=False)
    wanted = set(op_types)
    read = {i for n in model.graph.node if n.op_type in wanted for i in n.input if i}
    read |= {o for n in model.graph.node if n.op_type in wanted & {"Relu", "Clip"} for o in n.output if o}
    return frozenset(read)


def calibrate(fp32: Path, samples: list[Sample], method: str, op_types: list[str], work: Path,
              progress: Progress, external_data: bool = False, outputs: list[str] | None = None,
              record: int = 0, inputs_only: bool = False, auto_methods: tuple[str, ...] = AUTO_METHODS
              ) -> tuple[dict[str, Path], dict[str, list[np.ndarray]] | None]:
    """Write the ranges of the tensors ``quantize_static`` will need; returns one cache file per method and,
    with ``record``, the graph ``outputs`` of the first ``record`` samples (None if they were not all seen).

    ``auto`` collects histograms once and writes both the entropy ranges and the
    MinMax ranges (the histogram collector keeps each tensor's min and max, the
    same values ORT's MinMax calibrator reduces to), so the pipeline can build
    with each and keep the one closer to FP32. A cache holds only the ranges:
    ``quantize_static`` reads nothing else, and the histograms made its JSON
    large to write and to read back at every build. With ``inputs_only`` (Q/DQ on
    op inputs only) only the tensors it will read are calibrated
    (``read_by_quantizer``); each tensor's range depends on that tensor alone.
    """
    from onnxruntime.quantization import CalibrationMethod
    from onnxruntime.quantization.calibrate import TensorData, TensorsData, save_tensors_data

    histogram = method in ("entropy", "auto")
    wanted = read_by_quantizer(fp32, op_types) if inputs_only else None
    with quiet_onnxruntime():
        calibrator = _calibrator(fp32, op_types, work, "entropy" if histogram else method, external_data, wanted)
        use_fast_collector(calibrator)
        recording = _Recording(calibrator.infer_session, outputs or [], record)
        calibrator.infer_session = recording
        calibrator.collect_data(_reader(samples, progress))
        data = {"entropy" if histogram else method: calibrator.compute_data()}
    if method == "auto":
        histograms = {name: h for name, h in calibrator.collector.histogram_dict.items() if name in data["entropy"]}
        extremes = {name: TensorData(lowest=np.asarray(h[2], np.float32), highest=np.asarray(h[3], np.float32))
                    for name, h in histograms.items()}
        data = {"minmax": TensorsData(CalibrationMethod.MinMax, extremes), **data}
        if "percentile" in auto_methods:
            data["percentile"] = TensorsData(CalibrationMethod.Percentile, {
                name: percentile_range(h) for name, h in histograms.items()})
    caches = {}
    for name, ranges in data.items():
        _finite_ranges(ranges)
        caches[name] = work / f"ranges-{name}.json"
        only = {tensor: TensorData(lowest=value.range_value[0], highest=value.range_value[1])
                for tensor, value in ranges.items()}
        save_tensors_data(TensorsData(ranges.calibration_method, only), caches[name])
    seen = all(len(v) == record for v in recording.recorded.values()) and recording.recorded
    return caches, (recording.recorded if record and seen else None)


def percentile_range(histogram: tuple):  # noqa: ANN201 - ORT's TensorData
    """ORT's symmetric percentile range (``PercentileCalibrater``: the edge where the cumulative share of |x|
    reaches ``PERCENTILE``, clipped to the tensor's min and max), from the entropy pass's histogram, which is
    symmetric around zero: its two halves folded into one histogram of |x|."""
    from onnxruntime.quantization.calibrate import TensorData

    hist, edges, low, high = histogram[0], histogram[1], float(histogram[2]), float(histogram[3])
    zero = hist.size // 2
    folded = hist[zero:] + hist[:zero][::-1]
    total = folded.sum()
    if total <= 0:
        return TensorData(lowest=np.asarray(low, np.float32), highest=np.asarray(high, np.float32))
    cdf = np.cumsum(folded / total)
    index = min(int(np.searchsorted(cdf, PERCENTILE / 100.0)), folded.size - 1)
    threshold = float(edges[zero + index])
    return TensorData(lowest=np.asarray(max(-threshold, low), np.float32),
                      highest=np.asarray(min(threshold, high), np.float32))


def _finite_ranges(data) -> None:  # noqa: ANN001 - ORT's TensorsData
    """MinMax over a tensor holding inf (histograms are guarded in entropy.py): clamp to the float16 range,
    the widest the FP16 model can represent anyway."""
    from onnxruntime.quantization.calibrate import TensorData

    limit = float(np.finfo(np.float16).max)
    for name, value in data.items():
        low, high = (np.asarray(v) for v in value.range_value)
        if not (np.all(np.isfinite(low)) and np.all(np.isfinite(high))):
            low, high = (np.nan_to_num(v, nan=0.0, posinf=limit, neginf=-limit).astype(np.float32) for v in (low, high))
            data[name] = TensorData(lowest=low, highest=high)

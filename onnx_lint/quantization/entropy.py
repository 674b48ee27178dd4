"""ONNX Runtime's entropy (KL) threshold search, with its per-bin Python loops done by numpy.

ORT's ``HistogramCollector.get_entropy_threshold`` merges and expands the
quantized bins one at a time in Python; with enough histogram bins for the
search to mean anything (see ``ranges``) it cost 98 s on PP-OCRv4 det against
11 s for MinMax. This computes the same thresholds (same candidates, same
integer truncation, ORT's ``smooth_distribution`` and ``entropy`` as the same
float32 operations without their generic checks), block sums by reshaping
instead of loops; ``tests/test_quantize.py`` checks that it
agrees with ORT's implementation. The calibrators onnx-lint makes get a
collector that uses it (an instance of a subclass of ORT's, set on each
calibrator: no class of ORT's is changed), together with a guard that keeps
inf/nan activations out of ORT's histograms.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

SMOOTHING = 0.0001  # ORT's smooth_distribution default


def smooth_distribution(p: np.ndarray) -> np.ndarray | None:
    """ORT's ``quant_utils.smooth_distribution`` (the same float32 operations in the same order), without its
    assertions: counts are whole numbers, so a smoothed value stays above zero."""
    zeros = p == 0
    is_zeros = zeros.astype(np.float32)
    is_nonzeros = (~zeros).astype(np.float32)
    n_zeros = is_zeros.sum()
    n_nonzeros = p.size - n_zeros
    if not n_nonzeros:
        return None
    eps1 = SMOOTHING * float(n_zeros) / float(n_nonzeros)
    hist = p.astype(np.float32)
    hist += SMOOTHING * is_zeros + (-eps1) * is_nonzeros
    return hist


def entropy(p: np.ndarray, q: np.ndarray) -> np.float32:
    """ORT's ``calibrate.entropy`` of two smoothed float32 distributions: each normalized, then the sum of
    ``p * log(p / q)``. Both are positive everywhere, so ORT's ``rel_entr`` masks change nothing."""
    pk = p / np.sum(p)
    qk = q / np.sum(q)
    return np.sum(pk * np.log(pk / qk))


def entropy_threshold(histogram: tuple, num_quantized_bins: int) -> tuple[np.ndarray, np.ndarray]:
    """The (low, high) threshold with the least KL divergence, as ORT's search finds it."""
    hist, edges = histogram[0], histogram[1]
    num_bins = hist.size
    zero = num_bins // 2
    half = num_quantized_bins // 2
    dtype = edges.dtype
    below = np.concatenate([[0], np.cumsum(hist)])
    divergences = np.zeros(zero - half + 1)
    thresholds = []
    for k, i in enumerate(range(half, zero + 1)):
        start, end = zero - i, min(zero + i + 1, num_bins)
        thresholds.append((edges[start], edges[end]))
        sliced = hist[start:end]
        p = sliced.copy()
        p[0] += below[start]
        p[-1] += below[-1] - below[end]
        nonzeros = (p != 0).astype(np.int64)
        merged = sliced.size // num_quantized_bins
        span = merged * num_quantized_bins
        quantized = sliced[:span].reshape(num_quantized_bins, merged).sum(axis=1)
        quantized[-1] += sliced[span:].sum()
        norm = nonzeros[:span].reshape(num_quantized_bins, merged).sum(axis=1)
        q = np.zeros(p.size, dtype=np.int64)
        values = np.where(norm != 0, quantized / np.where(norm == 0, 1, norm), 0.0)
        q[:span] = np.repeat(values, merged)  # ORT assigns a float into int64: truncation, kept here
        smooth_p, smooth_q = smooth_distribution(p), smooth_distribution(q)
        divergences[k] = (np.inf if smooth_p is None or smooth_q is None
                          else np.array(entropy(smooth_p, smooth_q), dtype=dtype))
    low, high = thresholds[int(np.argmin(divergences))]
    low = histogram[2] if low < histogram[2] else low
    high = histogram[3] if high > histogram[3] else high
    return low, high


def _finite(name_to_arr: dict) -> dict:
    """Activations with inf/nan (an overflowing Exp) clamped to FP16's range: ORT's histogram of such a
    tensor asks numpy for bins over [-inf, inf] and fails ("supplied range ... is not finite")."""
    limit = float(np.finfo(np.float16).max)
    cleaned = {}
    for name, value in name_to_arr.items():
        arrays = value if isinstance(value, list) else [value]
        fixed = [np.nan_to_num(a, nan=0.0, posinf=limit, neginf=-limit) if isinstance(a, np.ndarray)
                 and a.dtype.kind == "f" and not np.all(np.isfinite(a)) else a for a in arrays]
        cleaned[name] = fixed if isinstance(value, list) else fixed[0]
    return cleaned


def _finite_array(value: np.ndarray) -> np.ndarray:
    """``value``, or (inf/nan in it) a copy clamped to FP16's range as ``_finite`` does; min and max propagate
    nan and show inf, so a finite array costs two reductions and no temporary."""
    if value.dtype.kind != "f" or value.size == 0 or (np.isfinite(value.min()) and np.isfinite(value.max())):
        return value
    limit = float(np.finfo(np.float16).max)
    return np.nan_to_num(value, nan=0.0, posinf=limit, neginf=-limit)


def collect_value(collector, name_to_arr: dict, merge: Callable[[object, dict], None]) -> None:  # noqa: ANN001
    """ORT's ``HistogramCollector.collect_value`` for one call with every sample, without its copies.

    ORT stacks each tensor's per-sample arrays and flattens the stack (two copies of every activation of
    every sample) before one ``np.histogram``. Histogram counts over the same range and bins add up over any
    split of the data, and min/max are exact, so a histogram per sample, summed, gives the same counts, edges,
    min, max and threshold. A tensor seen before, or mixed dtypes, go through ORT's own code (``merge``).
    """
    for tensor, values in name_to_arr.items():
        arrays = [_finite_array(np.asarray(v)) for v in (values if isinstance(values, list) else [values])]
        if tensor in collector.histogram_dict or len({a.dtype for a in arrays}) != 1:
            merge(collector, {tensor: np.asarray(arrays)})
            continue
        dtype = arrays[0].dtype
        filled = [a for a in arrays if a.size]
        if filled:
            min_value = min((a.min() for a in filled), key=float)
            max_value = max((a.max() for a in filled), key=float)
        else:
            min_value, max_value = np.array(0, dtype=dtype), np.array(0, dtype=dtype)
        threshold = np.array(max(abs(min_value), abs(max_value)), dtype=dtype)
        span: Any = (-threshold, threshold)  # 0-d arrays of the data's dtype, as ORT passes them
        hist, edges = np.histogram(np.empty(0, dtype), collector.num_bins, range=span)
        for a in filled:
            hist += np.histogram(a.ravel(), collector.num_bins, range=span)[0]
        collector.histogram_dict[tensor] = (hist, edges, min_value, max_value, threshold)


def use_fast_collector(calibrator) -> None:  # noqa: ANN001 - ORT's HistogramCalibrater
    """Give an ORT histogram calibrator a collector that uses ``entropy_threshold`` and ``collect_value`` and sees
    only finite values: an instance of a subclass, set on this calibrator alone (ORT makes its own collector only
    when none is set), so no class of ORT's is changed and two runs in two threads do not meet."""
    if hasattr(calibrator, "collector"):
        calibrator.collector = _collector_class()(
            method=calibrator.method, symmetric=getattr(calibrator, "symmetric", False), num_bins=calibrator.num_bins,
            num_quantized_bins=calibrator.num_quantized_bins, percentile=calibrator.percentile,
            scenario=calibrator.scenario)


@functools.lru_cache(maxsize=1)
def _collector_class() -> type:
    from onnxruntime.quantization.calibrate import HistogramCollector

    class FastHistogramCollector(HistogramCollector):
        def get_entropy_threshold(self, histogram, num_quantized_bins):  # noqa: ANN001, ANN202 - ORT's interface
            return entropy_threshold(histogram, num_quantized_bins)

        def collect(self, name_to_arr: dict) -> None:
            if self.method in ("entropy", "distribution"):  # collect_value's path; it guards inf/nan itself
                collect_value(self, name_to_arr, HistogramCollector.collect_value)
            else:
                super().collect(_finite(name_to_arr))

    return FastHistogramCollector

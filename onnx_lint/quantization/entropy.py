"""ONNX Runtime's entropy (KL) threshold search, with its per-bin Python loops done by numpy.

ORT's ``HistogramCollector.get_entropy_threshold`` merges and expands the
quantized bins one at a time in Python; with enough histogram bins for the
search to mean anything (see ``ranges``) it cost 98 s on PP-OCRv4 det against
11 s for MinMax. This computes the same thresholds (same candidates, same
integer truncation, ORT's own ``smooth_distribution`` and ``entropy``), block
sums by reshaping instead of loops; ``tests/test_quantize.py`` checks that it
agrees with ORT's implementation. It is swapped in only while onnx-lint
calibrates, together with a guard that keeps inf/nan activations out of ORT's
histograms.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import numpy as np


def entropy_threshold(histogram: tuple, num_quantized_bins: int) -> tuple[np.ndarray, np.ndarray]:
    """The (low, high) threshold with the least KL divergence, as ORT's search finds it."""
    from onnxruntime.quantization.calibrate import entropy
    from onnxruntime.quantization.quant_utils import smooth_distribution

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
        p, q = smooth_distribution(p), smooth_distribution(q)
        divergences[k] = np.inf if p is None or q is None else np.array(entropy(p, q), dtype=dtype)
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


@contextlib.contextmanager
def fast_entropy() -> Iterator[None]:
    """ORT's histogram calibrators use ``entropy_threshold`` and see only finite values, for the duration."""
    from onnxruntime.quantization.calibrate import HistogramCollector

    search, collect = HistogramCollector.get_entropy_threshold, HistogramCollector.collect
    HistogramCollector.get_entropy_threshold = lambda self, histogram, bins: entropy_threshold(histogram, bins)
    HistogramCollector.collect = lambda self, name_to_arr: collect(self, _finite(name_to_arr))
    try:
        yield
    finally:
        HistogramCollector.get_entropy_threshold, HistogramCollector.collect = search, collect

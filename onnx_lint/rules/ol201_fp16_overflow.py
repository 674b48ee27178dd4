"""## fp16-overflow (OL201)

### What it does
Flags FLOAT and DOUBLE initializers and Constant values that FP16 cannot
hold: a finite value above 65504 in magnitude (it becomes `inf`, or is clamped
by converters that clamp), or a tensor whose nonzero values all lie below
FP16's smallest subnormal, 2^-24 ≈ 5.96e-8, so that the whole tensor flushes
to zero (a LayerNorm `epsilon` of 1e-12 held as a tensor, a tiny divisor).
Each finding names the tensor, its offending values and the nodes that read
it, and suggests the `onnx-lint quantize --exclude-nodes` that keeps those
nodes out of INT8 and FP16: they compute in FP32, and constants only they read
stay FP32 (their outputs are still converted to FP16 after them, so an output
that itself exceeds 65504 needs its readers excluded as well). Scattered tiny weights in a larger tensor are
not flagged: they flush to zero with no effect worth a warning.

Only what the file proves is reported: values stored in external data are not
read (linting never opens weight files), and activations are not guessed.

`onnx-lint quantize` keeps the nodes that read such a constant (and the
constant) in FP32 by itself, and its report lists them; a model it wrote,
recognised by its `onnx_lint.quantized` record with the Q/DQ it lists, is not
noted again for the constants it kept.

Not flagged, by design: the fill value of a `ConstantOfShape` (transformer
exports write `torch.finfo(float32).min`, -3.4e38, or -1e9 there to build
attention masks). ONNX Runtime's FP16 converter clamps it to -65504, and a
masked softmax then gives what FP32 gives: measured on a masked attention
(fill by `Where` and by an additive bias), outputs differ by at most 1.2e-7.
Only rows where every position is masked (padding rows, whose output nothing
reads) differ, by up to 0.83 with an additive bias. Flagging every decoder
export for that would be noise.

### Why does this matter?
FP16 conversion (onnxconverter-common, ONNX Runtime's float16 tools, the FP16
stage of `onnx-lint quantize`, TensorRT's FP16 mode) casts every float
constant. Cast plainly, a mask constant of -1e9 or -3.4e38 becomes `-inf` and
turns `0 * -inf` into NaN, and an epsilon that becomes 0 turns a normalization
into a division by zero; converters that clamp instead (ONNX Runtime's makes
-1e9 into -65504 and 1e-12 into 6e-8) change the value silently. Either way
the model converts without an error and computes something else.

### Example
```
Add(scores, mask)   with initializer mask = -1e9
```
gives `initializer 'mask' ... -1e+09 ... read by 'Add_3' (Add); keep them
in FP32 with onnx-lint quantize --exclude-nodes Add_3`.

### Fix safety
No fix: clamping a constant changes what the model computes; whether -65504
is an acceptable stand-in for -1e9 is the author's call.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator

import numpy as np
import onnx

from onnx_lint.lint.context import LintContext
from onnx_lint.lint.diagnostics import Diagnostic, Location, Severity
from onnx_lint.lint.rule_api import Rule
from onnx_lint.model.graphs import GraphScope
from onnx_lint.model.tensors import ConstantTensor, constant_nodes, consumers, qdq_nodes
from onnx_lint.rules.helpers import node_label, quantize_record_note

FP16_MAX = 65504.0
FP16_TINY = 2.0**-25  # values below half the smallest subnormal round to zero
_FLOATS = frozenset({onnx.TensorProto.FLOAT, onnx.TensorProto.DOUBLE})
# raw_data is little-endian by ONNX's definition, whatever the machine.
_RAW_DTYPES: dict[int, np.dtype] = {onnx.TensorProto.FLOAT: np.dtype("<f4"), onnx.TensorProto.DOUBLE: np.dtype("<f8")}
_BATCH_BYTES = 64 * 2**20


def fp16_problem(values: np.ndarray) -> str | None:
    """Why FP16 cannot hold these values, or ``None``.

    The common case (every value in range, some not tiny) costs a min and a max: no copy of the weights.
    """
    if values.size == 0:
        return None
    low, high = float(np.min(values)), float(np.max(values))
    if math.isfinite(low) and math.isfinite(high) and -FP16_MAX <= low and high <= FP16_MAX:
        if max(-low, high) >= FP16_TINY or (low == 0 and high == 0):
            return None  # in range, and some value survives (a NaN makes min/max NaN: it goes the long way)
    flat = values.ravel()
    finite = flat[np.isfinite(flat)]
    magnitude = np.abs(finite)
    big = finite[magnitude > FP16_MAX]
    if big.size:
        extreme = big[np.argmax(np.abs(big))]
        return (f"{big.size} of {values.size} value(s) exceed FP16's range ±65504 "
                f"(largest magnitude {float(extreme):.4g}); a cast to FP16 makes them ±inf, converters that clamp "
                "(ONNX Runtime's) make them ±65504")
    nonzero = magnitude[magnitude > 0]
    if nonzero.size and float(nonzero.max()) < FP16_TINY:
        return (f"all {nonzero.size} nonzero value(s) are below FP16's smallest subnormal "
                f"(largest {float(nonzero.max()):.4g}); a cast to FP16 makes the tensor all zeros, converters that "
                "clamp (ONNX Runtime's) raise them to 6e-08")
    return None


def suspect_constants(scope: GraphScope) -> Iterator[ConstantTensor]:
    """The float constants of one graph that FP16 may not hold: initializers in file order, then Constants.

    Tens of thousands of small weights cost one ``to_array`` and two reductions each when read one
    by one. Initializers stored as raw bytes are instead read in bulk, in one pass over the graph
    that reads two fields per float tensor and builds no record for it: per element type their
    bytes are joined (in batches, so memory stays bounded) and ``minimum.reduceat``/``maximum.reduceat``
    give every tensor's range in two numpy calls. A tensor that passes the cheap test of
    ``fp16_problem`` is certainly fine; the rest (out of range, all tiny, NaN, other storage forms,
    Constant nodes) are yielded for the full check.
    """
    initializers = scope.graph.initializer
    external = onnx.TensorProto.EXTERNAL
    indexes: dict[int, list[int]] = {data_type: [] for data_type in _RAW_DTYPES}
    raws: dict[int, list[bytes]] = {data_type: [] for data_type in _RAW_DTYPES}
    suspects: list[int] = []
    for i, tensor in enumerate(initializers):
        data_type = tensor.data_type
        if data_type not in _FLOATS:
            continue
        raw = tensor.raw_data  # empty for external data and for typed-field storage
        if raw:
            indexes[data_type].append(i)
            raws[data_type].append(raw)
        elif tensor.data_location != external:
            suspects.append(i)
    for data_type, dtype in _RAW_DTYPES.items():
        if indexes[data_type]:
            suspects.extend(_out_of_fast_range(indexes[data_type], raws[data_type], dtype))
    for i in sorted(suspects):
        yield ConstantTensor(initializers[i].name, initializers[i], "initializer")
    yield from (c for c in constant_nodes(scope) if c.tensor.data_type in _FLOATS and not c.external)


def _out_of_fast_range(indexes: list[int], raws: list[bytes], dtype: np.dtype) -> list[int]:
    """The tensors (by initializer index) that fail the fast path of ``fp16_problem`` (some value
    may not fit), or whose bytes are no whole number of values; the tensors are read in batches of
    about ``_BATCH_BYTES``."""
    sizes = np.fromiter(map(len, raws), dtype=np.int64, count=len(raws))
    whole = sizes % dtype.itemsize == 0
    where = np.asarray(indexes, dtype=np.int64)
    suspects = where[~whole].tolist()
    if not whole.all():
        raws = [raw for raw, ok in zip(raws, whole.tolist()) if ok]
        where, sizes = where[whole], sizes[whole]
    ends = np.cumsum(sizes)
    start = 0
    while start < len(raws):
        # Tensors up to the first whose end passes the batch's byte budget (always at least one).
        stop = max(start + 1, int(np.searchsorted(ends, ends[start] - sizes[start] + _BATCH_BYTES, side="right")))
        values = np.frombuffer(b"".join(raws[start:stop]), dtype=dtype)
        counts = sizes[start:stop] // dtype.itemsize
        starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
        low = np.minimum.reduceat(values, starts).astype(np.float64)
        high = np.maximum.reduceat(values, starts).astype(np.float64)
        with np.errstate(invalid="ignore"):
            in_range = np.isfinite(low) & np.isfinite(high) & (low >= -FP16_MAX) & (high <= FP16_MAX)
            survives = (np.maximum(-low, high) >= FP16_TINY) | ((low == 0) & (high == 0))
        suspects.extend(where[start:stop][~(in_range & survives)].tolist())
        start = stop
    return suspects


class Fp16Overflow(Rule):
    code = "OL201"
    name = "fp16-overflow"
    severity = Severity.WARNING
    summary = "A float initializer or Constant overflows FP16 (|x| > 65504) or flushes to zero"
    needs_inference = False
    reads_annotations = False

    def check(self, ctx: LintContext) -> Iterable[Diagnostic]:
        if quantize_record_note(ctx.model, sum(1 for _ in qdq_nodes(ctx.scopes))) is None:
            return  # onnx-lint quantize wrote it, keeping what reads these constants in FP32 (its report says so)
        for scope in ctx.scopes:
            readers = None
            for const in suspect_constants(scope):
                values = const.value()
                problem = fp16_problem(values) if values is not None else None
                if problem is None:
                    continue
                if readers is None:
                    readers = consumers(scope.graph)
                nodes = [scope.graph.node[i] for i in readers.get(const.name, [])]
                yield self.report(ctx, _message(const, problem, nodes), _location(scope.path, const, scope.graph))


def _message(const: ConstantTensor, problem: str, nodes: list[onnx.NodeProto]) -> str:
    what = "initializer" if const.kind == "initializer" else "Constant value"
    text = f"{what} '{const.name}': {problem}"
    if not nodes:
        return text + "; no node reads it"
    text += "; read by " + ", ".join(f"'{node_label(n)}' ({n.op_type})" for n in nodes[:5])
    if len(nodes) > 5:
        text += f" and {len(nodes) - 5} more"
    named = [n.name for n in nodes if n.name]
    if named:
        text += f"; keep them in FP32 with onnx-lint quantize --exclude-nodes {','.join(named)}"
    return text


def _location(graph_path: str, const: ConstantTensor, graph: onnx.GraphProto) -> Location:
    if const.node_index is not None:
        node = graph.node[const.node_index]
        return Location.at_node(graph_path, const.node_index, node, tensor=const.name, op_type="Constant")
    index = next(i for i, t in enumerate(graph.initializer) if t.name == const.name)
    return Location.at_entry(graph_path, "initializer", index, tensor=const.name)

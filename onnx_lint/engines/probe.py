"""The third engine (docs/design.md, "the runtime probe"): run the model to see the shapes no static engine derives.

ONNX's inference and ONNX Runtime's symbolic inference do not shape ``ai.onnx.ml``
operators (scikit-learn, LightGBM, XGBoost exports), much of If/Loop state, or some
``com.microsoft`` operators. For the graph outputs they leave without a rank, the model is
run in ONNX Runtime on synthetic inputs three times: run A with every dynamic input dim at a
size of its own, run B at other sizes and with other, wider data (a bool condition flipped),
run C at run A's sizes with other data again. Only what follows the inputs is a fact: a dim
that equals one input dim's size in every run follows that input dim; a dim that is the same
number in all three runs is that number; any other dim (NonZero, Unique, a computed TopK k)
is dynamic but anonymous, never written as a number.

The run happens in a sandboxed child (``onnx_lint.engines.sandbox``: it dies with us, on its own CPU
deadline, under a fixed memory cap, on one thread), only for self-contained models under the
``--fix`` runtime check's size limits, only when onnxruntime is installed, and only when a
graph output is otherwise underivable: it never runs on a model whose outputs the static
engines shape.
"""

from __future__ import annotations

import json
import math
import re
import signal
from dataclasses import dataclass, field

import onnx

from onnx_lint.engines.ort_load_check import SESSION_LABEL, runtime_refusal_to_ask
from onnx_lint.engines.sandbox import MEMORY_CAP_BYTES, run_child, signal_name
from onnx_lint.model.load import LoadedModel
from onnx_lint.model.shapes import Dim, TensorInfo

TIMEOUT_S = 60.0
# Elements per synthetic input; a model asking for more is not run.
MAX_INPUT_ELEMENTS = 2**24
# Each dynamic input dim gets its own size, and other sizes in the second run.
RUN_SIZES = ((3, 5, 7, 11, 13, 17, 19, 23), (4, 6, 10, 12, 14, 18, 20, 22))
# The data of runs A, B and C: (seed, scale). Run B's values are ten times wider, so a threshold that
# standard normal values never cross (``X > 5``) is crossed; run C draws uniformly at run A's sizes.
RUN_DATA = ((1, 1.0), (2, 10.0), (3, 10.0))
_FLOATS = {1: "float32", 10: "float16", 11: "float64"}
_INTEGERS = {2: "uint8", 3: "int8", 4: "uint16", 5: "int16", 6: "int32", 7: "int64", 12: "uint32", 13: "uint64"}
_INTEGER_DTYPES = frozenset(_INTEGERS.values())
BOOL = 9
# Integer and bool inputs whose name reads as a mask get 1 (attend); other integers are ids and indices.
_MASK = re.compile(r"mask", re.IGNORECASE)

_CHILD = r"""
import json, sys
import numpy as np
import onnxruntime as ort
options = ort.SessionOptions()
options.log_severity_level = 3
options.intra_op_num_threads = 1
options.inter_op_num_threads = 1
options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
session = ort.InferenceSession(payload, options, providers=["CPUExecutionProvider"])
answers = []
for run in request["runs"]:
    rng = np.random.default_rng(run["seed"])
    feeds = {}
    for name, (dtype, shape, fill) in run["feeds"].items():
        if fill == "normal":
            feeds[name] = (rng.standard_normal(shape) * run["scale"]).astype(dtype)
        elif fill == "uniform":
            feeds[name] = rng.uniform(-run["scale"], run["scale"], shape).astype(dtype)
        else:
            feeds[name] = np.full(shape, fill, dtype=dtype)
    try:
        results = session.run(request["outputs"], feeds)
    except Exception:
        if not run.get("optional"):
            raise
        answers.append(None)  # an optional run that fails only leaves its question open
        continue
    answers.append([[list(np.asarray(r).shape), str(np.asarray(r).dtype)] for r in results])
sys.stdout.write(json.dumps(answers))
"""


@dataclass(frozen=True)
class ProbeFact:
    """What the runs showed for one output: its type, and per dim the evidence of the runs."""

    info: TensorInfo
    sizes: tuple[tuple[int, int], ...]  # the dim in run A and run B (other sizes, other data)
    follows: tuple[str | None, ...]  # the input dim (its name, or "input 'x' dim 0") each dim follows
    # Per dim: run C (run A's sizes and conditions, other float data) or run E (other integer ids) gave
    # another value than run A, so the dim depends on the data, not (only) on the input dims.
    data_dependent: tuple[bool, ...] = ()
    # Per dim: run D (run A's sizes and data, every bool condition flipped) gave another value: the dim
    # depends on which branch of an If runs. ``branch_sizes`` holds the dim in runs A and D.
    branch_dependent: tuple[bool, ...] = ()
    branch_sizes: tuple[tuple[int, int], ...] = ()


@dataclass
class ProbeResult:
    facts: dict[str, ProbeFact]
    reason: str | None = None  # why there are no facts
    # Outputs whose rank differs between the runs (an If taking another branch): no shape to declare.
    unstable: dict[str, str] = field(default_factory=dict)
    conditions: tuple[str, ...] = ()  # the bool inputs run D flipped
    expired: bool = False  # the run was stopped at its time limit (the inference budget)


def probe_refusal(loaded: LoadedModel) -> str | None:
    """Why the model may not be run (``None``: it may): the limits of every ONNX Runtime session onnx-lint makes."""
    return runtime_refusal_to_ask(loaded)


def _fill(name: str, elem_type: int) -> tuple[str, tuple[object, object, object]] | None:
    """The numpy dtype of an input and what each of the three runs fills it with; ``None``: no safe value.

    Floats get random values that differ between the runs; integers are ids or indices (0 is a
    valid row of every table) or masks (1: attend); a bool condition is true in runs A and C and
    false in run B, so both branches of an If it steers are taken.
    """
    if elem_type in _FLOATS:
        return _FLOATS[elem_type], ("normal", "normal", "uniform")
    if elem_type in _INTEGERS:
        value = 1 if _MASK.search(name) else 0
        return _INTEGERS[elem_type], (value, value, value)
    if elem_type == BOOL:
        if _MASK.search(name):
            return "bool", (True, True, True)
        return "bool", (True, False, True)
    return None


def _feeds(loaded: LoadedModel) -> tuple[list[dict], dict[str, tuple[int, int]]] | str:
    """Synthetic inputs for the runs, and the sizes each input dim got in runs A and B; or why none.

    Runs A, B and C always; run D (run A with every bool condition flipped) only for a model with one;
    run E (run A with integer ids of 1 instead of 0) only for a model with such inputs, and optional: an
    id of 1 may be past the end of a one-row table, and then E answers nothing.
    """
    graph = loaded.model.graph
    initializers = {i.name for i in graph.initializer}
    runs: list[dict] = [{"seed": seed, "scale": scale, "feeds": {}} for seed, scale in RUN_DATA]
    named: list[dict[str, int]] = [{}, {}]
    for value in graph.input:
        if value.name in initializers:
            continue
        if value.type.WhichOneof("value") != "tensor_type":
            return f"input '{value.name}' is not a tensor"
        tensor = value.type.tensor_type
        fill = _fill(value.name, tensor.elem_type)
        if fill is None:
            kind = onnx.TensorProto.DataType.Name(tensor.elem_type) if tensor.elem_type else "untyped"
            return f"input '{value.name}' is a {kind} tensor (no safe synthetic value)"
        dtype, fills = fill
        if not tensor.HasField("shape"):
            return f"input '{value.name}' has no shape"
        for run in (0, 1):
            shape = []
            for axis, dim in enumerate(tensor.shape.dim):
                if dim.HasField("dim_value") and dim.dim_value > 0:
                    shape.append(dim.dim_value)
                    continue
                key = dim.dim_param or f"input '{value.name}' dim {axis}"
                if key not in named[run]:
                    if len(named[run]) >= len(RUN_SIZES[run]):
                        return "the model has more dynamic input dims than the probe has sizes"
                    named[run][key] = RUN_SIZES[run][len(named[run])]
                shape.append(named[run][key])
            count = math.prod(shape)
            if count > MAX_INPUT_ELEMENTS:
                return f"input '{value.name}' would need {count} elements"
            runs[run]["feeds"][value.name] = (dtype, shape, fills[run])
            if run == 0:
                runs[2]["feeds"][value.name] = (dtype, shape, fills[2])  # run C: run A's sizes
    conditions = [name for name, (_, _, fill) in runs[0]["feeds"].items() if fill is True
                  and runs[1]["feeds"][name][2] is False]
    if conditions:  # run D: run A exactly, but the other branch of each condition
        flipped = {name: (dtype, shape, (not fill) if name in conditions else fill)
                   for name, (dtype, shape, fill) in runs[0]["feeds"].items()}
        runs.append({**runs[0], "feeds": flipped, "kind": "branch"})
    ids = [name for name, (dtype, _, fill) in runs[0]["feeds"].items() if dtype in _INTEGER_DTYPES and fill == 0]
    if ids:  # run E: run A with ids of 1, so a size read from an integer input is not taken for a constant
        other = {name: (dtype, shape, 1 if name in ids else fill)
                 for name, (dtype, shape, fill) in runs[0]["feeds"].items()}
        runs.append({**runs[0], "feeds": other, "kind": "ids", "optional": True})  # 1 may be past a table's end
    return runs, {key: (named[0][key], named[1][key]) for key in named[0]}


def probe(loaded: LoadedModel, outputs: list[str], timeout: float = TIMEOUT_S) -> ProbeResult:
    """Run the model three to five times on synthetic inputs, within ``timeout`` seconds in all; facts for
    ``outputs`` or why there are none."""
    refusal = probe_refusal(loaded)
    if refusal is not None:
        return ProbeResult({}, refusal)
    made = _feeds(loaded)
    if isinstance(made, str):
        return ProbeResult({}, made)
    runs, dims = made
    done = run_child(_CHILD, {"outputs": outputs, "runs": runs}, loaded.data, label=SESSION_LABEL,
                     timeout=timeout)
    if done.timed_out:
        return ProbeResult({}, f"the run did not finish within its budget of {timeout:.3g} s", expired=True)
    if done.returncode != 0:
        return ProbeResult({}, _failure(done.returncode, done.text()))
    try:
        answers = json.loads(done.stdout)
    except ValueError:
        return ProbeResult({}, "the run gave no readable answer")
    extra = {run.get("kind"): answer for run, answer in zip(runs[3:], answers[3:])}
    conditions = tuple(name for name, (_, _, fill) in runs[3]["feeds"].items() if fill is False) \
        if "branch" in extra else ()
    return _facts(outputs, answers[:3], dims, conditions, extra.get("branch"), extra.get("ids"))


def _facts(outputs: list[str], answers: list, dims: dict[str, tuple[int, int]], conditions: tuple[str, ...] = (),
           branch: list | None = None, ids: list | None = None) -> ProbeResult:
    """Only what follows the inputs is a fact: a dim that tracks one dynamic input dim in every run, or
    that is the same constant in all runs (other sizes, other data, other branches); anything else is
    unknown, and a dim that changes with the branch alone is marked as such."""
    by_size = [{pair[0]: key for key, pair in dims.items()}, {pair[1]: key for key, pair in dims.items()}]
    result = ProbeResult({}, conditions=conditions)
    for index, name in enumerate(outputs):
        (shape_a, dtype), (shape_b, _), (shape_c, _) = (answers[run][index] for run in range(3))
        shape_d = branch[index][0] if branch is not None else shape_a
        shape_e = ids[index][0] if ids is not None else shape_a
        if len(shape_a) != len(shape_d):
            result.unstable[name] = (f"its rank depends on which If branch runs: {len(shape_a)} with "
                                     f"{_named(conditions)} true, {len(shape_d)} with {_named(conditions)} false")
            continue
        if not len(shape_a) == len(shape_b) == len(shape_c) == len(shape_e):
            ranks = sorted({len(shape_a), len(shape_b), len(shape_c), len(shape_e)})
            result.unstable[name] = f"its rank changes with the data ({' or '.join(map(str, ranks))})"
            continue
        out: list[Dim] = []
        follows: list[str | None] = []
        for a, b, c, d, e in zip(shape_a, shape_b, shape_c, shape_d, shape_e):
            key = by_size[0].get(a) if by_size[0].get(a) == by_size[1].get(b) and a == c == d == e else None
            follows.append(key)
            if a == b == c == d == e:
                out.append(a)
            elif key is not None and not key.startswith("input '"):
                out.append(key)  # the producer's own dim name
            else:
                out.append(None)
        result.facts[name] = ProbeFact(TensorInfo(_elem_type(dtype), tuple(out)), tuple(zip(shape_a, shape_b)),
                                       tuple(follows),
                                       tuple(a != c or a != e for a, c, e in zip(shape_a, shape_c, shape_e)),
                                       tuple(a != d for a, d in zip(shape_a, shape_d)),
                                       tuple(zip(shape_a, shape_d)))
    return result


def _named(conditions: tuple[str, ...]) -> str:
    return " and ".join(f"'{c}'" for c in conditions)


def branch_note(fact: ProbeFact, conditions: tuple[str, ...], only: list[int] | None = None) -> str | None:
    """Which dims of an output (of ``only``, if given) depend on the If branch taken, in words (``None``: none)."""
    dims = [f"dim {i} is {a} with {_named(conditions)} true and {d} with it false"
            for i, ((a, d), moves) in enumerate(zip(fact.branch_sizes, fact.branch_dependent))
            if moves and (only is None or i in only)]
    return "; ".join(dims) or None


def _elem_type(dtype: str) -> int:
    import numpy as np
    import onnx.helper

    try:
        return int(onnx.helper.np_dtype_to_tensor_dtype(np.dtype(dtype)))
    except (TypeError, KeyError, ValueError):
        return 0


def _failure(returncode: int, stderr: str) -> str:
    if returncode in (-signal.SIGXCPU, -signal.SIGKILL) and "Error" not in stderr:
        return f"the run used up its CPU limit (its time budget) or was stopped ({signal_name(returncode)})"
    if returncode < 0:
        return f"ONNX Runtime crashed ({signal_name(returncode)})"
    lines = [line for line in stderr.strip().splitlines() if line.strip()]
    if any("MemoryError" in line or "bad_alloc" in line or "Failed to allocate memory" in line for line in lines):
        return f"the run ran out of its memory cap ({MEMORY_CAP_BYTES // 2**30} GiB of address space)"
    last = lines[-1] if lines else f"exit status {returncode}"
    last = re.sub(r"^(?:\w+\.)*\w*(?:Error|Exception|Fail|Argument)\w*: ", "", last)  # the exception's class
    last = re.sub(r"^\[ONNXRuntimeError\] : \d+ : \w+ : ", "", last)
    return f"ONNX Runtime could not run it: {last[:300]}"

"""The third engine (docs/design.md, "the runtime probe"): run the model to see the shapes no static engine derives.

ONNX's inference and ONNX Runtime's symbolic inference do not shape ``ai.onnx.ml``
operators (scikit-learn, LightGBM, XGBoost exports), much of If/Loop state, or some
``com.microsoft`` operators. For the graph outputs they leave without a rank, the model is
run in ONNX Runtime on synthetic float inputs, twice, with every dynamic input dim set to a
size of its own and different sizes in the two runs. A dim equal in both runs is concrete;
a dim that equals one input dim's size in both runs follows that input dim; any other dim is
dynamic but anonymous.

The run happens in a child process under a time limit and an address-space limit, only for
self-contained models under the ``--fix`` runtime check's size limit, only when onnxruntime
is installed, and only when a graph output is otherwise underivable: it never runs on a
model whose outputs the static engines shape.
"""

from __future__ import annotations

import json
import math
import re
import signal
import subprocess
import sys
from dataclasses import dataclass

from onnx_lint.model_io import LoadedModel
from onnx_lint.runtime_check import runtime_available
from onnx_lint.shapes import Dim, TensorInfo

ENGINE_RUN = "onnxruntime run"
# The same ceilings as the --fix runtime check: session creation grows superlinearly with nodes.
MAX_NODES = 20_000
TIMEOUT_S = 60.0
MEMORY_BYTES = 4 * 2**30
# Elements per synthetic input; a model asking for more is not run.
MAX_INPUT_ELEMENTS = 2**24
# Each dynamic input dim gets its own size, and other sizes in the second run.
RUN_SIZES = ((3, 5, 7, 11, 13, 17, 19, 23), (4, 6, 10, 12, 14, 18, 20, 22))
_FLOATS = {1: "float32", 10: "float16", 11: "float64"}

_CHILD = r"""
import json, resource, sys
limit = int(sys.argv[1])
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
import numpy as np
import onnxruntime as ort
request = json.loads(sys.argv[2])
options = ort.SessionOptions()
options.log_severity_level = 3
options.intra_op_num_threads = 1
options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
session = ort.InferenceSession(sys.stdin.buffer.read(), options, providers=["CPUExecutionProvider"])
wanted = request["outputs"]
answers = []
for feeds_spec in request["runs"]:
    rng = np.random.default_rng(0)
    feeds = {name: rng.standard_normal(shape).astype(dtype) for name, (dtype, shape) in feeds_spec.items()}
    results = session.run(wanted, feeds)
    answers.append([[list(np.asarray(r).shape), str(np.asarray(r).dtype)] for r in results])
sys.stdout.write(json.dumps(answers))
"""


@dataclass(frozen=True)
class ProbeFact:
    """What the runs showed for one output: its type, and per dim the evidence of two runs."""

    info: TensorInfo
    sizes: tuple[tuple[int, int], ...]  # the dim in run 1 and run 2
    follows: tuple[str | None, ...]  # the input dim (its name, or "input 'x' dim 0") each dim follows


@dataclass
class ProbeResult:
    facts: dict[str, ProbeFact]
    reason: str | None = None  # why there are no facts


def probe_refusal(loaded: LoadedModel) -> str | None:
    """Why the model may not be run (``None``: it may)."""
    if not runtime_available():
        return "onnxruntime is not installed"
    if loaded.has_external_data:
        return "the model keeps its weights in external data"
    nodes = sum(len(scope.graph.node) for scope in loaded.scopes)
    if nodes > MAX_NODES:
        return f"the model has {nodes} nodes (more than {MAX_NODES})"
    return None


def _feeds(loaded: LoadedModel) -> tuple[list[dict], dict[str, tuple[int, int]]] | str:
    """Synthetic inputs for both runs, and the two sizes each input dim got; or why none can be made."""
    graph = loaded.model.graph
    initializers = {i.name for i in graph.initializer}
    runs: list[dict] = [{}, {}]
    named: list[dict[str, int]] = [{}, {}]
    for value in graph.input:
        if value.name in initializers:
            continue
        if value.type.WhichOneof("value") != "tensor_type":
            return f"input '{value.name}' is not a tensor"
        tensor = value.type.tensor_type
        dtype = _FLOATS.get(tensor.elem_type)
        if dtype is None:
            return f"input '{value.name}' is not a float tensor (no safe synthetic value)"
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
            runs[run][value.name] = (dtype, shape)
    return runs, {key: (named[0][key], named[1][key]) for key in named[0]}


def probe(loaded: LoadedModel, outputs: list[str]) -> ProbeResult:
    """Run the model twice on synthetic inputs; facts for ``outputs`` or the reason there are none."""
    refusal = probe_refusal(loaded)
    if refusal is not None:
        return ProbeResult({}, refusal)
    made = _feeds(loaded)
    if isinstance(made, str):
        return ProbeResult({}, made)
    runs, dims = made
    request = json.dumps({"outputs": outputs, "runs": runs})
    try:
        done = subprocess.run([sys.executable, "-c", _CHILD, str(MEMORY_BYTES + len(loaded.data) * 4), request],
                              input=loaded.data, capture_output=True, timeout=TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        return ProbeResult({}, f"the run did not finish within {TIMEOUT_S:.0f} s")
    if done.returncode != 0:
        return ProbeResult({}, _failure(done.returncode, done.stderr.decode("utf-8", "replace")))
    try:
        answers = json.loads(done.stdout)
    except ValueError:
        return ProbeResult({}, "the run gave no readable answer")
    by_size = [{pair[0]: key for key, pair in dims.items()}, {pair[1]: key for key, pair in dims.items()}]
    facts: dict[str, ProbeFact] = {}
    for index, name in enumerate(outputs):
        (shape_a, dtype), (shape_b, _) = answers[0][index], answers[1][index]
        if len(shape_a) != len(shape_b):
            continue  # the rank changes with the input: nothing stable to declare
        out: list[Dim] = []
        follows: list[str | None] = []
        for a, b in zip(shape_a, shape_b):
            key = by_size[0].get(a) if by_size[0].get(a) == by_size[1].get(b) else None
            follows.append(key)
            if a == b:
                out.append(a)
            elif key is not None and not key.startswith("input '"):
                out.append(key)  # the producer's own dim name
            else:
                out.append(None)
        facts[name] = ProbeFact(TensorInfo(_elem_type(dtype), tuple(out)),
                                tuple(zip(shape_a, shape_b)), tuple(follows))
    return ProbeResult(facts)


def _elem_type(dtype: str) -> int:
    import numpy as np
    import onnx.helper

    try:
        return int(onnx.helper.np_dtype_to_tensor_dtype(np.dtype(dtype)))
    except (TypeError, KeyError, ValueError):
        return 0


def _failure(returncode: int, stderr: str) -> str:
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return f"ONNX Runtime crashed ({name})"
    lines = [line for line in stderr.strip().splitlines() if line.strip()]
    if any("MemoryError" in line or "bad_alloc" in line for line in lines):
        return "the run ran out of its memory limit"
    last = lines[-1] if lines else f"exit status {returncode}"
    last = re.sub(r"^(?:\w+\.)*\w*(?:Error|Exception|Fail|Argument)\w*: ", "", last)  # the exception's class
    last = re.sub(r"^\[ONNXRuntimeError\] : \d+ : \w+ : ", "", last)
    return f"ONNX Runtime could not run it: {last[:300]}"

"""The fuzz target (issue 6): mutate valid models, then lint, fix and lint again.

``draw_model`` turns Hypothesis choices into model bytes: a seed model from
``examples.defects`` with a few random mutations of its declarations (dims,
ranks, element types, value_info), of its computation (attributes, op types,
inputs) and, one time in four, of its raw bytes (which is how invalid UTF-8
names and corrupt lengths are reached). ``check_properties`` runs the real engine on it,
the same path ``onnx-lint check --fix`` takes, and asserts:

1. no uncaught exception and no internal error, whatever the input;
2. ``--fix`` either writes a model that passes what the fix promises (the
   onnx checker accepts it if it accepted the original; nothing it fixed is
   left to fix) or writes nothing at all;
3. a fix is idempotent: fixing the fixed file writes nothing;
4. a fix never changes node contents, attributes, initializers or functions
   (it may reorder nodes: OL103's fix sorts them).

Used by ``tests/test_fuzz.py`` (a bounded run in CI) and by ``scripts/fuzz.py``
(the long run whose figures are in docs/reliability.md).
"""

from __future__ import annotations

import signal
import string
import sys
import tempfile
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import onnx
from hypothesis import HealthCheck, given, settings
from hypothesis import seed as fixed_seed
from hypothesis import strategies as st
from model_checks import checker_error, computation

from examples import defects, readiness
from onnx_lint.commands.check import Job, process_job
from onnx_lint.engines.warm_children import kept_warm
from onnx_lint.rules import CODES

SEEDS: dict[str, Callable[[], onnx.ModelProto]] = {
    name: builder for name, (builder, _what) in {**defects.DEFECTS, **defects.HEALTHY}.items()}
SEEDS.update({name: builder for name, (builder, _what, _codes) in readiness.READINESS.items()})
ELEMENT_TYPES = st.sampled_from(list(range(0, 24)) + [999])
DIMS = st.one_of(st.integers(-3, 8), st.sampled_from([10**9, 2**62, 2**63 - 1]),
                 st.text(string.ascii_letters + "_ ?", min_size=0, max_size=6), st.none())
EXAMPLE_TIMEOUT_S = 120


# -- mutations: each takes the model and Hypothesis' draw -----------------------------------------
def _declarations(model: onnx.ModelProto) -> list[onnx.ValueInfoProto]:
    graph = model.graph
    return list(graph.input) + list(graph.output) + list(graph.value_info)


def _tensor_names(model: onnx.ModelProto) -> list[str]:
    names = [v.name for v in model.graph.input] + [t.name for t in model.graph.initializer]
    return names + [o for node in model.graph.node for o in node.output if o]


def _set_dim(model, draw) -> None:
    value = draw(st.sampled_from(_declarations(model)))
    shape = value.type.tensor_type.shape
    if not shape.dim:
        shape.dim.add()
    dim = shape.dim[draw(st.integers(0, len(shape.dim) - 1))]
    new = draw(DIMS)
    if new is None:
        dim.Clear()
    elif isinstance(new, str):
        dim.dim_param = new
    else:
        dim.dim_value = new


def _change_rank(model, draw) -> None:
    value = draw(st.sampled_from(_declarations(model)))
    shape = value.type.tensor_type.shape
    if shape.dim and draw(st.booleans()):
        del shape.dim[draw(st.integers(0, len(shape.dim) - 1))]
    else:
        shape.dim.add().dim_value = draw(st.integers(0, 6))


def _set_element_type(model, draw) -> None:
    draw(st.sampled_from(_declarations(model))).type.tensor_type.elem_type = draw(ELEMENT_TYPES)


def _drop_shape_or_type(model, draw) -> None:
    value = draw(st.sampled_from(_declarations(model)))
    if draw(st.booleans()):
        value.type.tensor_type.ClearField("shape")
    else:
        value.ClearField("type")


def _value_info(model, draw) -> None:
    if model.graph.value_info and draw(st.booleans()):
        del model.graph.value_info[draw(st.integers(0, len(model.graph.value_info) - 1))]
        return
    name = draw(st.sampled_from(_tensor_names(model) + ["not_in_the_graph"]))
    dims = draw(st.lists(DIMS.filter(lambda d: d is not None), max_size=4))
    model.graph.value_info.append(onnx.helper.make_tensor_value_info(name, draw(ELEMENT_TYPES), dims))


def _rename_output(model, draw) -> None:
    output = draw(st.sampled_from(list(model.graph.output)))
    output.name = draw(st.sampled_from(_tensor_names(model) + ["nowhere"]))


def _node_attribute(model, draw) -> None:
    nodes = [n for n in model.graph.node if n.attribute]
    if not nodes:
        return
    attr = draw(st.sampled_from(list(draw(st.sampled_from(nodes)).attribute)))
    if attr.type == onnx.AttributeProto.INT:
        attr.i = draw(st.integers(-5, 10))
    elif attr.type == onnx.AttributeProto.INTS:
        attr.ints[:] = draw(st.lists(st.integers(-5, 10), max_size=4))


def _node_identity(model, draw) -> None:
    node = draw(st.sampled_from(list(model.graph.node)))
    choice = draw(st.integers(0, 2))
    if choice == 0:
        node.op_type = draw(st.sampled_from(["Relu", "Identity", "MatMul", "Reshape", "NoSuchOp", ""]))
    elif choice == 1 and node.input:
        node.input[draw(st.integers(0, len(node.input) - 1))] = draw(st.sampled_from(_tensor_names(model) + [""]))
    else:
        node.domain = draw(st.sampled_from(["", "com.microsoft", "com.example", "ai.onnx.ml"]))


def _opset(model, draw) -> None:
    model.opset_import[0].version = draw(st.integers(1, onnx.defs.onnx_opset_version()))


MUTATIONS = [_set_dim, _change_rank, _set_element_type, _drop_shape_or_type, _value_info, _rename_output,
             _node_attribute, _node_identity, _opset]


def draw_model(draw) -> tuple[str, bytes]:
    """A seed name and the bytes of its mutated model (sometimes with raw bytes damaged too)."""
    seed = draw(st.sampled_from(sorted(SEEDS)))
    model = SEEDS[seed]()
    for mutation in draw(st.lists(st.sampled_from(MUTATIONS), min_size=1, max_size=4)):
        mutation(model, draw)
    data = bytearray(model.SerializeToString())
    if draw(st.integers(0, 3)) == 0:  # one example in four: damage one to three bytes themselves
        for _ in range(draw(st.integers(1, 3))):
            data[draw(st.integers(0, len(data) - 1))] = draw(st.integers(0, 255))
    return seed, bytes(data)


# -- the properties --------------------------------------------------------------------------------
def _fix(path: Path):
    job = Job(path, str(path), frozenset(CODES), fix=True, diff=False, cache_root=None, fingerprint="",
              runtime_check=True)
    return process_job(job)


class _Timeout(Exception):
    pass


def _alarm(_signum, _frame):
    raise _Timeout(f"one example ran past {EXAMPLE_TIMEOUT_S} s")


def check_properties(folder: Path, data: bytes) -> str:
    """Run lint + fix + re-fix on ``data``; returns what happened ("refused", "clean", "fixed", ...)."""
    path = folder / "fuzz.onnx"
    path.write_bytes(data)
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(EXAMPLE_TIMEOUT_S)
    try:
        first = _fix(path)
        assert not [e for e in first.internal_errors if not e.startswith("fix failed")], first.internal_errors
        leftovers = sorted(p.name for p in folder.iterdir() if p.name != "fuzz.onnx")
        assert leftovers == [], f"files left behind: {leftovers}"
        after = path.read_bytes()
        if not first.written:
            assert after == data, "nothing was to be written, but the file changed"
            if first.unreadable:
                return "refused"
            return "fix refused" if first.internal_errors else ("findings" if first.remaining else "clean")
        original = onnx.ModelProto.FromString(data)
        fixed = onnx.ModelProto.FromString(after)
        assert computation(fixed) == computation(original), "the fix changed what the model computes"
        if checker_error(original) is None:
            assert checker_error(fixed) is None, f"the fix broke the checker: {checker_error(fixed)}"
        second = _fix(path)
        assert not second.internal_errors, second.internal_errors
        assert not second.written and path.read_bytes() == after, "fixing the fixed model wrote again"
        assert not [d for d in second.diagnostics if d.fixable], "the fix left something to fix"
        return "fixed"
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


# -- the run -----------------------------------------------------------------------------------------
def fuzz(examples: int, outcomes: Counter[str], *, derandomize: bool = False, seed: int | None = None,
         failing: list[bytes] | None = None, progress_every: int = 0) -> None:
    """Run the target on ``examples`` drawn models, counting what each came to in ``outcomes``.

    Raises on the first failure, after Hypothesis has shrunk it; the bytes of every failing
    model tried go to ``failing`` (the last is the smallest).
    """

    @settings(max_examples=examples, deadline=None, derandomize=derandomize, database=None, print_blob=True,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(st.data())
    def one_example(data):
        _seed, model = draw_model(data.draw)
        with tempfile.TemporaryDirectory() as folder:
            try:
                outcomes[check_properties(Path(folder), model)] += 1
            except BaseException:
                if failing is not None:
                    failing.append(model)
                raise
        if progress_every and sum(outcomes.values()) % progress_every == 0:
            print(f"  {sum(outcomes.values())} examples ...", file=sys.stderr, flush=True)

    # Many models in one process, as `check` of a folder: the sandboxed children (the ONNX Runtime session OL107
    # asks for, the probe) stay warm across the examples instead of starting an interpreter each.
    with kept_warm():
        (fixed_seed(seed)(one_example) if seed is not None else one_example)()

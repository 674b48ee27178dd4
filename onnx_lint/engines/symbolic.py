"""ONNX Runtime's symbolic shape inference, run under a budget it cannot escape.

The engine is pure Python over sympy; on some real graphs (torchvision's R-CNN heads) a
single call into sympy runs for minutes, where no cooperative check can reach it. It
therefore runs in a killable child (``onnx_lint.engines.budgeted``): when its budget runs out
the child is killed and the lint goes on with what the other engines derived.
"""

from __future__ import annotations

import importlib.util
import logging
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import onnx

from onnx_lint.base.errors import first_line
from onnx_lint.engines.budgeted import EarlyChild, run_in_child
from onnx_lint.engines.limits import engine_headroom, memory_ceiling

# Each round of the symbolic engine restarts after one batch of dim merges; real models need a few.
MAX_SYMBOLIC_ROUNDS = 64
# A derived dim whose sympy expression prints longer than this becomes a fresh symbol (see ``_capped``).
MAX_DIM_CHARS = 512
_MODEL, _FAILURE = b"M", b"E"
_TARGET = "onnx_lint.engines.symbolic:infer_in_child"


@dataclass(frozen=True)
class SymbolicFailure:
    """Why the engine gave no model; ``expired`` when it was stopped at its budget."""

    message: str
    expired: bool = False


def run_symbolic_budgeted(model: Callable[[], onnx.ModelProto], budget_s: float,
                          cancelled: Callable[[], bool] | None = None,
                          early: EarlyChild | None = None) -> onnx.ModelProto | SymbolicFailure:
    """``run_symbolic_inference(model())`` in a child killed after ``budget_s`` seconds; ``early``: the child
    ``start_early`` started on this model, whose budget counts from its start (then ``model`` is only
    called, and its copy made, if that child gave no answer)."""
    missing = _missing_engine()
    if missing is not None:
        return SymbolicFailure(missing)
    outcome = early.outcome(budget_s, cancelled) if early is not None else None
    if outcome is None:
        outcome = run_in_child(_TARGET, model().SerializeToString(), budget_s, cancelled)
    if outcome.payload is None:
        return SymbolicFailure(outcome.reason, outcome.expired)
    kind, body = outcome.payload[:1], outcome.payload[1:]
    if kind == _MODEL:
        return onnx.ModelProto.FromString(body)
    return SymbolicFailure(body.decode("utf-8", "replace") or "gave no answer")


def start_early(model: onnx.ModelProto) -> EarlyChild | None:
    """Start the engine on ``model`` before it is known to be needed, in a forked child (``None`` where
    none starts): on a small model with ONNX Runtime's own operators, which ONNX's inference cannot type,
    the engine is needed almost always and takes 0.3 s, mostly sympy's import; started first, it runs
    beside the rules that ask ONNX Runtime for a session instead of after them."""
    if _missing_engine() is not None:
        return None
    return EarlyChild.start(_TARGET, model.SerializeToString())


def _missing_engine() -> str | None:
    """Why the engine cannot run here (said without starting a child), or ``None``."""
    missing = next((name for name in ("onnxruntime", "sympy") if importlib.util.find_spec(name) is None), None)
    return None if missing is None else f"not available ({missing} is not installed); install onnx-lint[runtime]"


def infer_in_child(request: bytes) -> bytes:
    """The child's side: a serialized model in, the inferred model (or the failure) out."""
    result = run_symbolic_inference(onnx.ModelProto.FromString(request))
    if isinstance(result, str):
        return _FAILURE + result.encode()
    return _MODEL + result.SerializeToString()


def run_symbolic_inference(model: onnx.ModelProto) -> onnx.ModelProto | str:
    """ONNX Runtime's symbolic shape inference without its file-writing failure path (in this process).

    Returns the (possibly partial) inferred model, or a message saying why it failed.
    ``SymbolicShapeInference.infer_shapes`` saves ``sym_shape_infer_temp.onnx`` into the
    current directory when it gives up; the loop below is the same algorithm minus that.
    """
    try:
        from onnx_lint.engines.ort_symbolic_loader import symbolic_shape_infer

        module = symbolic_shape_infer()  # without onnxruntime's packages, which import torch
        SymbolicShapeInference, get_opset = module.SymbolicShapeInference, module.get_opset
    except Exception as exc:  # onnxruntime or sympy missing
        return f"not available ({first_line(exc)}); install onnx-lint[runtime]"
    logger = logging.getLogger("onnxruntime.tools.symbolic_shape_infer")
    previous = logger.level
    logger.setLevel(logging.CRITICAL)
    try:
        opset = get_opset(model)
        if not opset or opset < 7:
            return "needs opset 7 or newer"
        engine = _capped(SymbolicShapeInference)(2**31 - 1, True, False, 0)
        with memory_ceiling(engine_headroom(model.ByteSize())), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # numpy's overflow warnings on huge dims are noise to a user
            engine._preprocess(model)
            for _ in range(MAX_SYMBOLIC_ROUNDS):
                merges = dict(engine.suggested_merge_)
                engine._infer_impl()
                if not engine.run_:
                    break
                if engine.suggested_merge_ == merges:  # ONNX Runtime's own loop would never end here
                    return "made no progress (an untyped value it cannot merge); stopped"
            else:
                return f"did not converge in {MAX_SYMBOLIC_ROUNDS} rounds; stopped"
            engine._update_output_from_vi()
        return engine.out_mp_
    except MemoryError:
        return "ran out of memory (a dim too large to compute with); stopped"
    except Exception as exc:
        message = first_line(exc)
        return message if message == type(exc).__name__ else f"{type(exc).__name__}: {message}"
    finally:
        logger.setLevel(previous)


def _capped(engine_class: Any) -> Any:
    """The engine, with every dim expression it derives capped at ``MAX_DIM_CHARS`` characters.

    Why the engine ran for minutes on torchvision's R-CNN models: each operator handler derives
    its output dims as sympy expressions of its input dims, and nothing bounds their size. The
    anchor count of a feature pyramid is a sum over levels of ``3*H_i*W_i``, each ``H_i`` a chain
    of ``floor(floor(h/2 - 1/2)/2) + 1`` terms: a 1,300-character expression, which ``_infer_Slice``
    then hands to ``sympy.simplify`` (112 s for the one Slice of Mask R-CNN's RPN). A dim that large
    says nothing a user could check against a declaration, so after each operator such a dim is
    replaced by a fresh symbol of the engine's own kind (``Concat_12_o0__d0``): sound (a fresh
    symbol claims no value) and what the engine does itself wherever it cannot compute a dim.
    """

    class Capped(engine_class):
        dispatcher_: dict[str, Callable[[onnx.NodeProto], None]]

        def __init__(self, *args: object) -> None:
            super().__init__(*args)
            self.dispatcher_ = {op: self._capping(infer) for op, infer in self.dispatcher_.items()}

        def _capping(self, infer: Callable[[onnx.NodeProto], None]) -> Callable[[onnx.NodeProto], None]:
            def run(node: onnx.NodeProto) -> None:
                if node.op_type != "Slice":
                    infer(node)
                else:
                    try:
                        infer(node)
                    except Exception:  # sympy cannot order two bounds: the sliced dims become unknown
                        self._slice_to_fresh_dims(node)
                self._cap_outputs(node)

            return run

        def _slice_to_fresh_dims(self, node: onnx.NodeProto) -> None:
            """Slice keeps its input's rank: the sliced axes (every axis if unknown) get fresh symbols."""
            shape = list(self._get_shape(node, 0))
            axes = self._try_get_value(node, 3) if len(node.input) > 3 and node.input[3] else None
            chosen = range(len(shape)) if axes is None else [int(a) % len(shape) for a in axes]
            for axis in chosen:
                fresh = self._new_symbolic_dim_from_output(node, 0, axis)
                shape[axis] = int(fresh) if getattr(fresh, "is_Integer", False) else str(fresh)
            value = self.known_vi_[node.output[0]]
            value.CopyFrom(onnx.helper.make_tensor_value_info(node.output[0], value.type.tensor_type.elem_type, shape))

        def _cap_outputs(self, node: onnx.NodeProto) -> None:
            for index, name in enumerate(node.output):
                value = self.known_vi_.get(name)
                if value is None or not value.type.HasField("tensor_type"):
                    continue
                for axis, dim in enumerate(value.type.tensor_type.shape.dim):
                    if len(dim.dim_param) > MAX_DIM_CHARS:
                        fresh = self._new_symbolic_dim_from_output(node, index, axis)
                        if getattr(fresh, "is_Integer", False):
                            dim.dim_value = int(fresh)
                        else:
                            dim.dim_param = str(fresh)

    return Capped

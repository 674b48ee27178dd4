"""What the full checker and ONNX Runtime say of the model as it is, asked in this run.

A finding that says a tool refuses the model quotes that tool's own verdict, reached here on the
model's own bytes (declarations included), never a guess from onnx-lint's stripped copy: where
inference of the copy fails but the tools accept the model, the failure is onnx-lint's engine's
limit, not the model's defect. Asked only when a rule has something such a claim would rest on.
"""

from __future__ import annotations

from dataclasses import dataclass

from onnx_lint.engines.checker import full_checker_error
from onnx_lint.engines.ort_load_check import runtime_load_error, runtime_refusal_to_ask
from onnx_lint.engines.strip import swap_heavy_initializers
from onnx_lint.model.load import LoadedModel


@dataclass(frozen=True)
class ToolVerdicts:
    """The full checker's and ONNX Runtime's verdicts on one model's bytes."""

    checker: str | None  # the full checker's first complaint; None: it passes
    runtime: str | None  # ONNX Runtime's reason not to create a session; None: it loads (or was not asked)
    runtime_unasked: str | None  # why ONNX Runtime was not asked (None: it was)

    @property
    def refused(self) -> bool:
        return self.checker is not None or self.runtime is not None

    def quoted(self) -> str:
        """The refusals in the tools' own words: ``onnx.checker (full) fails: ...; ONNX Runtime refuses ...``."""
        said = []
        if self.checker is not None:
            said.append(f"onnx.checker (full) fails on the model: {self.checker}")
        if self.runtime is not None:
            said.append(f"ONNX Runtime refuses to load it: {self.runtime}")
        elif self.runtime_unasked is None:
            said.append("ONNX Runtime loads it")
        return "; ".join(said)


def runtime_refusal(loaded: LoadedModel) -> str | None:
    """ONNX Runtime's own reason not to create a session for ``loaded`` (``None``: it creates one, or cannot be
    asked: ``runtime_refusal_to_ask``)."""
    if runtime_refusal_to_ask(loaded) is not None:
        return None
    return runtime_load_error(loaded.data)


def tool_verdicts(loaded: LoadedModel, runtime: str | None) -> ToolVerdicts:
    """The full checker's verdict on ``loaded``, beside ONNX Runtime's (``runtime_refusal``, asked once per model)."""
    data = loaded.data
    if loaded.has_external_data:  # the external tensors become typed inputs: no weight byte is read
        copy = loaded.fresh_copy()
        swap_heavy_initializers(copy, loaded.scope_paths, all_external=True)
        data = copy.SerializeToString()
    checker = full_checker_error(data)
    return ToolVerdicts(checker, runtime, runtime_refusal_to_ask(loaded))

"""How long each slow inference engine may run on one model.

ONNX's own inference (with data propagation) is a C++ pass that grows with the graph
and runs under a memory ceiling; it is the baseline every lint pays anyway. The other
engines can grow far faster on some graphs: ONNX Runtime's symbolic inference (sympy)
and a run of the model in ONNX Runtime. Each of those gets a budget that scales with
the model: a fixed allowance plus a multiple of the time ONNX's inference took on it.
A budget set in the configuration (``inference-budget``) or on the command line
(``--inference-budget``) replaces the computed one.
"""

from __future__ import annotations

# Seconds any model gets, whatever its size: a child interpreter's start and sympy's import.
BASE_S = 10.0
# Then this many times what ONNX's own inference of the model took.
PER_BARE_SECOND = 10.0


def inference_budget(configured: float | None, bare_s: float) -> float:
    """The budget in seconds: the configured one, else ``BASE_S + PER_BARE_SECOND * bare_s``."""
    if configured is not None:
        return configured
    return BASE_S + PER_BARE_SECOND * max(bare_s, 0.0)


# The largest budget accepted (a day): beyond it a deadline overflows the clocks and limits it is turned into.
MAX_BUDGET_S = 24 * 3600.0


def parse_budget(value: object, where: str) -> float | None:
    """A configured budget: a positive number of seconds up to ``MAX_BUDGET_S``, or ``"auto"`` (``None``);
    ValueError otherwise (``inf``, ``nan`` and ``1e300`` included)."""
    if value == "auto" or value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= MAX_BUDGET_S:
        raise ValueError(f"'inference-budget' in {where} must be a positive number of seconds up to "
                         f"{MAX_BUDGET_S:.0f} (a day), or \"auto\"; got {value!r}")
    return float(value)

"""What the name check (pinned run) and the runtime probe cost on the real models.

    python benchmarks/engine_costs.py

For every real model of tests/real_models.py: how long the whole lint takes, whether the
distinct-prime pinned inference ran (and its time), and whether the runtime probe ran (and
its time, child process included). Both engines are meant to run only where a declared name
could be wrong or an output is otherwise underivable; this shows where they did.
"""

from __future__ import annotations

import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from real_models import all_real_models  # noqa: E402

from onnx_lint.engines import oracle, probe  # noqa: E402
from onnx_lint.lint.linter import lint_file  # noqa: E402
from onnx_lint.rules import ALL_RULES  # noqa: E402

_spent: dict[str, float] = defaultdict(float)
_count: dict[str, int] = defaultdict(int)


def _timed(name: str, function):
    def wrapper(*args, **kwargs):
        start = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            _spent[name] += time.perf_counter() - start
            _count[name] += 1
    return wrapper


def main() -> None:
    oracle.ShapeOracle.named_pins = _timed("pinned", oracle.ShapeOracle.named_pins)  # type: ignore[method-assign]
    probe.probe = _timed("probe", probe.probe)  # type: ignore[assignment]
    print("| family | models | lint total (s) | pinned runs | pinned (s) | probe calls | probe (s) | probe asked for |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    for family, paths in all_real_models().items():
        total = 0.0
        before = (dict(_spent), dict(_count))
        probed = []
        for path in paths:
            start = time.perf_counter()
            _, ctx = lint_file(path, path.name, ALL_RULES, lambda code: True)
            total += time.perf_counter() - start
            result = ctx.oracle.probe_result if ctx is not None else None
            if result is not None:
                name = f"{path.parent.name}/{path.name}" if path.name == "model.onnx" else path.name
                outcome = "shaped" if result.facts else f"not run: {result.reason}"
                probed.append(f"`{name}` ({outcome[:90]})")
        pins = _count["pinned"] - before[1].get("pinned", 0)
        probes = _count["probe"] - before[1].get("probe", 0)
        print(f"| {family} | {len(paths)} | {total:.2f} | {pins} | {_spent['pinned'] - before[0].get('pinned', 0):.2f} "
              f"| {probes} | {_spent['probe'] - before[0].get('probe', 0):.2f} | {'; '.join(probed) or '—'} |")


if __name__ == "__main__":
    main()

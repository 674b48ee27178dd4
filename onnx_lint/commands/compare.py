"""``onnx-lint compare BEFORE AFTER``: what a fix, a quantizer, an FP16 converter or onnxsim changed.

The text report leads with the numbers (nodes, weights, precision before and after, op counts that
moved), then each kind of change with its first ``--limit`` entries; ``--output-format json`` gives
every entry (up to ``onnx_lint.lint.compare.MAX_LISTED`` of each kind) for scripts and the editor.
Exit 0 when it compared (whatever it found; ``--exit-code`` makes "they differ" exit 1, as
``git diff --exit-code`` does), 2 when a model cannot be read.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the parser is built on every run: the models' machinery loads only for a comparison
    from onnx_lint.lint.compare import Comparison, NodeChange

# The report's sections, in reading order: what a quantizer or converter did first, then the rest.
SECTIONS = (("precision", "Precision changed"), ("kept", "Kept in FP32"), ("rewritten", "Rewritten"),
            ("removed", "Removed"), ("added", "Added"))
# Declarations: a type that changed or went away is what a strict tool trips on; an added annotation rarely.
DECLARATION_SECTIONS = (("changed", "Declarations changed"), ("dropped", "Declarations dropped"),
                        ("added", "Annotations added"))


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("compare", help="what changed between a model and its fixed, quantized or simplified twin")
    parser.add_argument("before", help="the original model")
    parser.add_argument("after", help="its rewritten twin")
    parser.add_argument("--output-format", choices=("text", "json"), default="text")
    parser.add_argument("--limit", type=_limit_arg, default=10,
                        help="entries shown per kind of change in the text report (default 10; 0: all)")
    parser.add_argument("--exit-code", action="store_true", help="exit 1 when the models differ")


def cmd_compare(args: argparse.Namespace) -> int:
    from onnx_lint.lint.compare import compare_models
    from onnx_lint.lint.context import LintContext
    from onnx_lint.model.load import read_model

    before = LintContext(read_model(Path(args.before)), args.before)
    after = LintContext(read_model(Path(args.after)), args.after)
    result = compare_models(before, after)
    if args.output_format == "json":
        print(json.dumps(result.to_json(), indent=2, ensure_ascii=False))
    else:
        from onnx_lint.formats.text import terminal_safe

        for line in report_lines(result, args.limit):
            print(terminal_safe(line))
    return 1 if args.exit_code and not result.identical else 0


def report_lines(result: Comparison, limit: int = 10) -> Iterator[str]:
    """The text report (see the module docstring); ``limit`` 0 lists every entry."""
    b, a = result.before, result.after
    yield f"Comparing {b.file} (before) with {a.file} (after)"
    if result.identical:
        yield "  no node, declaration, operator count or weight type differs"
        return
    yield f"  nodes      {b.nodes:,} → {a.nodes:,}{_ops_note(result)}"
    yield f"  weights    {_size(b.weight_bytes)} → {_size(a.weight_bytes)}"
    yield f"  precision  {_precision(b.precision)} → {_precision(a.precision)}"
    for types, count in result.weights_retyped.items():
        yield f"  weights    {count:,} initializer{'' if count == 1 else 's'} {types}"
    for kind, title in SECTIONS:
        nodes = [_node_line(c) for c in result.nodes if c.kind == kind]
        yield from _section(f"{title} ({_nodes(result.counts[kind])})", result.counts[kind], nodes, limit)
    for change, title in DECLARATION_SECTIONS:
        total = result.counts[f"declarations.{change}"]
        declarations = [f"{d.where.replace('_', ' ')} {d.tensor!r}{_in_graph(d.graph)}: {d.before or 'not declared'} → "
                        f"{d.after or 'not declared'}" for d in result.declarations if d.change == change]
        yield from _section(f"{title} ({total:,})", total, declarations, limit)


def _section(title: str, total: int, lines: list[str], limit: int) -> Iterator[str]:
    """A titled list of the first ``limit`` lines (0: all), saying how many more there are."""
    if not total:
        return
    yield ""
    yield title
    shown = lines if limit == 0 else lines[:limit]
    yield from (f"  {line}" for line in shown)
    if total > len(shown):
        yield f"  … and {total - len(shown):,} more (--limit 0 or --output-format json lists them)"


def _in_graph(path: str) -> str:
    """" in graph/node[0]/then_branch" for a subgraph; nothing for the main graph."""
    from onnx_lint.model.graphs import ROOT

    return "" if path == ROOT else f" in {path}"


def _node_line(change: NodeChange) -> str:
    return f"{change.op} {change.name!r}{_in_graph(change.graph)}: {change.detail}"  # the op and name the original has


def _nodes(count: int) -> str:
    return f"{count:,} node{'' if count == 1 else 's'}"


def _ops_note(result: Comparison) -> str:
    moved = [f"{'+' if after > before else '−'}{abs(after - before):,} {op}" for op, before, after in result.ops[:6]]
    more = len(result.ops) - 6
    return f"  ({', '.join(moved)}{f', {more} more op types' if more > 0 else ''})" if moved else ""


def _precision(counts: dict[str, int]) -> str:
    return ", ".join(f"{name} {count:,}" for name, count in counts.items()) or "unknown"


def _size(count: int) -> str:
    for unit, scale in (("GB", 2**30), ("MB", 2**20), ("KB", 2**10)):
        if count >= scale:
            return f"{count / scale:.1f} {unit}"
    return f"{count} B"


def _limit_arg(value: str) -> int:
    try:
        limit = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number, not {value!r}") from None
    if limit < 0:
        raise argparse.ArgumentTypeError(f"must be 0 (all) or more, not {value!r}")
    return limit

"""``onnx-lint rule``, ``onnx-lint list-rules`` and ``onnx-lint version``: what the tool knows, printed."""

from __future__ import annotations

import argparse
import sys

from onnx_lint.base.version import __version__


def cmd_rule(args: argparse.Namespace) -> int:
    import json

    from onnx_lint.rules import ALL_RULES, get_rule

    if args.all:
        chosen = list(ALL_RULES)
    elif args.code:
        rule = get_rule(args.code)
        if rule is None:
            print(f"onnx-lint: error: unknown rule '{args.code}' (see `onnx-lint list-rules`)", file=sys.stderr)
            return 2
        chosen = [rule]
    else:
        print("onnx-lint: error: name a rule code (for example `onnx-lint rule OL001`) or pass --all",
              file=sys.stderr)
        return 2
    if args.output_format == "json":
        payload = [{"code": r.code, "name": r.name, "summary": r.summary, "severity": r.severity.value,
                    "fix": "safe" if r.fixable else None, "fix_availability": r.fix_availability.value,
                    "explanation": r.explanation(), "url": r.url()} for r in chosen]
        print(json.dumps(payload if args.all else payload[0], indent=2))
        return 0
    print("\n\n".join(f"{r.explanation()}\n\nDocumentation: {r.url()}" for r in chosen))
    return 0


def cmd_list_rules(args: argparse.Namespace) -> int:
    import json

    from onnx_lint.rules import ALL_RULES

    if args.output_format == "json":
        print(json.dumps([{"code": r.code, "name": r.name, "severity": r.severity.value,
                           "fixable": r.fixable, "fix_availability": r.fix_availability.value,
                           "summary": r.summary} for r in ALL_RULES], indent=2))
        return 0
    for r in ALL_RULES:
        fix = "[*]" if r.fixable else "   "
        print(f"{r.code}  {fix}  {r.severity.value:<7}  {r.name:<32}  {r.summary}")
    return 0


def cmd_version() -> int:
    import importlib.metadata as md

    import onnx

    print(f"onnx-lint {__version__}")
    print(f"onnx {onnx.__version__} (IR {onnx.IR_VERSION}, opset {onnx.defs.onnx_opset_version()})")
    try:
        print(f"onnxruntime {md.version('onnxruntime')}")
    except md.PackageNotFoundError:
        print("onnxruntime not installed (symbolic fallback and quantize unavailable)")
    return 0

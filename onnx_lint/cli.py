"""The ``onnx-lint`` command line (docs/cli.md): its options, and the subcommand each invocation runs.

``commands.check`` runs a check (``commands.report`` prints it), ``commands.explain`` the rule
listings and versions; ``server`` and ``quantize`` parse their own options.

Exit codes: 0 clean or all fixed, 1 diagnostics remain, 2 usage error,
unreadable model or internal error. No traceback ever reaches the user.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

from onnx_lint.base.errors import OnnxLintError
from onnx_lint.base.version import __version__

SUBCOMMANDS = ("check", "rule", "list-rules", "compare", "server", "quantize", "version")


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="onnx-lint",
        description="Find and safely fix stale shapes and missing types in ONNX models.",
    )
    parser.add_argument("--version", action="version", version=f"onnx-lint {__version__}")
    sub = parser.add_subparsers(dest="command")

    check = sub.add_parser("check", help="lint models (the default command)")
    check.add_argument("paths", nargs="*", default=["."], help="model files or folders (default: .)")
    check.add_argument("--fix", action="store_true", help="apply safe fixes and rewrite the files")
    check.add_argument("--diff", action="store_true", help="show what --fix would change; write nothing")
    check.add_argument("--select", help="comma-separated rule codes or prefixes to enable")
    check.add_argument("--extend-select", help="rule codes or prefixes to enable in addition")
    check.add_argument("--ignore", help="comma-separated rule codes or prefixes to disable")
    from onnx_lint.formats import FORMATS

    check.add_argument("--output-format", choices=FORMATS, default=None,
                       help="how to print diagnostics (default: full)")
    check.add_argument("-o", "--output-file", help="write diagnostics to this file instead of stdout")
    check.add_argument("--exit-zero", action="store_true", help="exit 0 even if diagnostics remain")
    check.add_argument("--statistics", action="store_true", help="print a count per rule instead")
    check.add_argument("--jobs", "-j", type=_jobs_arg, default=0,
                       help="parallel processes (0: one per core; at most one per core)")
    check.add_argument("--no-cache", action="store_true", help="neither read nor write the lint cache")
    check.add_argument("--config", help="configuration file (onnx-lint.toml or pyproject.toml)")
    check.add_argument("--no-runtime-check", action="store_true",
                       help="with --fix, skip the ONNX Runtime load check of the fixed model")
    check.add_argument("--no-runtime-probe", action="store_true",
                       help="never run the model in ONNX Runtime to shape outputs no static engine derives")
    check.add_argument("--inference-budget", type=_budget_arg, default=None, metavar="SECONDS",
                       help="seconds each slow inference engine may run on one model "
                            "(default: 10 s plus 10x ONNX's own inference time on it)")
    check.add_argument("--quiet", "-q", action="store_true", help="print diagnostics only, no summary")
    # A plain flag: an optional value would take the path that follows it (`--timings model.onnx`).
    check.add_argument("--timings", action="store_true",
                       help="print where the time went (each engine step and rule, slowest first) to stderr; "
                            "implies no cache reads")
    check.add_argument("--timings-format", choices=("text", "json"), default=None,
                       help="print the timings as a table (text, the default) or one JSON object; implies --timings")
    check.add_argument("--shard", metavar="K/N",
                       help="check only the K-th of N shares of the files (by a hash of each path; for CI matrices)")

    rule = sub.add_parser("rule", help="explain a rule")
    rule.add_argument("code", nargs="?", help="rule code (OL001) or name")
    rule.add_argument("--all", action="store_true", help="explain every rule")
    rule.add_argument("--output-format", choices=("text", "json"), default="text")

    lst = sub.add_parser("list-rules", help="list every rule")
    lst.add_argument("--output-format", choices=("text", "json"), default="text")

    from onnx_lint.commands.compare import add_parser as add_compare

    add_compare(sub)

    # Listed for --help only: main() hands these to their own modules (and parsers) before parsing.
    sub.add_parser("quantize", add_help=False,
                   help="repair, then quantize a model to INT8 + FP16 (`onnx-lint quantize --help`)")
    sub.add_parser("server", add_help=False, help="run the language server over stdio (`onnx-lint server --help`)")
    sub.add_parser("version", help="print versions of onnx-lint and its engines")
    return parser


def run() -> NoReturn:
    """The console script and ``python -m onnx_lint``: ``main``, then leave without tearing the heap down.

    A lint of a 100k-node model holds a few hundred MB of protobuf and Python objects, and freeing them
    one by one at exit took 0.1-0.15 s, a tenth of the whole run (mypy leaves the same way, for the
    same reason). By then every file is written and closed and every child process reaped (an
    abandoned one dies with this process). The language server, whose worker processes and
    multiprocessing helpers end through the normal exit, and a run under coverage, which saves its
    data at exit, leave the normal way.
    """
    _one_blas_thread()
    _collect_garbage_less_often()
    code = main()
    if "coverage" in sys.modules or sys.argv[1:2] == ["server"]:
        sys.exit(code)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BrokenPipeError:  # the reader went away before the end of the report, as in ``main``
            code = code or 1
        except ValueError:  # closed already: nothing is left to write
            pass
    os._exit(code)


def _one_blas_thread() -> None:
    """Ask OpenBLAS, numpy's BLAS, for no helper threads, before numpy is first imported; a value the user
    set stays.

    As numpy loads, OpenBLAS starts a thread for every core but one, and each spins ~0.1 s waiting for
    work: 0.11 s of CPU per process on a 2-core machine (``import numpy`` alone 0.17 s against 0.11 s
    with one thread), taken from the core that ONNX's inference in a forked child needs at that very
    moment, and that many times over on a many-core machine or with ``--jobs``. onnx-lint makes no BLAS
    call large enough to gain from threads (its numpy work is element-wise: weight ranges, calibration
    statistics, a few vector norms). ``--jobs`` workers inherit the setting, where extra threads would only
    oversubscribe the cores they share; the sandboxed children that run models get one thread whatever
    the user set (``sandbox.ONE_THREAD_ENV``).
    """
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def _collect_garbage_less_often() -> None:
    """Raise the cycle collector's first threshold from 700 to 200,000 new containers, before onnx is imported.

    A lint builds millions of short-lived lists, tuples and dicts (a node scan, name sets, tables),
    nearly all freed by reference counting; at the default threshold the collector still ran 200-275
    times in one check of a 100k-node model, each older generation's pass walking every object the
    imports left: 0.03-0.16 s of the run's CPU (0.12-0.16 s on the 50k-tensor external-data chain).
    Cycles are still collected, 200,000 allocations apart. mypy sets the same thresholds for the
    same reason.
    """
    import gc
    import platform

    if platform.python_implementation() == "CPython":
        gc.set_threshold(200_000, 30, 30)


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return _main(argv)
    except BrokenPipeError:
        # The reader went away (`onnx-lint ... | head`): stop quietly, as `cat` does. Python would
        # flush stdout again at exit and print the same error, so stdout now goes nowhere.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


def _main(argv: Sequence[str] | None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list and args_list[0] not in SUBCOMMANDS and args_list[0] not in ("-h", "--help", "--version"):
        args_list.insert(0, "check")
    if not args_list:
        args_list = ["check"]
    if args_list[0] in ("server", "quantize"):
        return _run_extension(args_list[0], args_list[1:])
    parser = _build_parser()
    try:
        args = parser.parse_args(args_list)
    except SystemExit as exc:  # argparse already printed the usage error
        return 0 if exc.code == 0 else 2
    try:
        if args.command in ("rule", "list-rules", "version"):
            from onnx_lint.commands import explain

            if args.command == "rule":
                return explain.cmd_rule(args)
            return explain.cmd_list_rules(args) if args.command == "list-rules" else explain.cmd_version()
        if args.command == "compare":
            from onnx_lint.commands.compare import cmd_compare

            return cmd_compare(args)
        from onnx_lint.commands.check import cmd_check

        return cmd_check(args)
    except OnnxLintError as exc:
        from onnx_lint.formats.text import terminal_safe

        print(f"onnx-lint: error: {terminal_safe(str(exc))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("onnx-lint: interrupted", file=sys.stderr)
        return 130


def _run_extension(command: str, argv: list[str]) -> int:
    """``server`` and ``quantize`` live in their own modules, imported only when asked for."""
    import importlib

    module = {"server": "onnx_lint.server.cli", "quantize": "onnx_lint.commands.quantize"}[command]
    try:
        entry = importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if (exc.name or "").startswith("onnx_lint"):
            print(f"onnx-lint: error: `onnx-lint {command}` is not part of this version yet", file=sys.stderr)
            return 2
        print(f"onnx-lint: error: `onnx-lint {command}` needs {exc.name}, which is not installed "
              f"(pip install 'onnx-lint[{'server' if command == 'server' else 'runtime'}]')", file=sys.stderr)
        return 2
    return int(entry.main(argv))


def _budget_arg(value: str) -> float:
    from onnx_lint.engines.budget import MAX_BUDGET_S

    try:
        budget = float(value)
    except ValueError:
        budget = 0.0
    if not 0 < budget <= MAX_BUDGET_S:  # NaN fails both comparisons
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds up to {MAX_BUDGET_S:.0f} (a day), "
                                         f"not {value!r}")
    return budget


def _jobs_arg(value: str) -> int:
    """``--jobs``: 0 (one per core) up to the number of cores; more only costs memory (as ruff and xdist cap it)."""
    try:
        jobs = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number, not {value!r}") from None
    if jobs < 0:
        raise argparse.ArgumentTypeError(f"must be 0 (one per core) or more, not {value!r}")
    return min(jobs, os.cpu_count() or 1)

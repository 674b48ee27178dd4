"""The ``onnx-lint`` command line (docs/cli.md): check, fix, explain rules.

Exit codes: 0 clean or all fixed, 1 diagnostics remain, 2 usage error,
unreadable model or internal error. No traceback ever reaches the user.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from onnx_lint.base.errors import ConfigError, OnnxLintError
from onnx_lint.base.version import __version__

SUBCOMMANDS = ("check", "rule", "list-rules", "server", "quantize", "version")
DEFAULT_EXCLUDES = {".git", ".hg", ".svn", "node_modules", "__pycache__", ".onnx-lint-cache", ".venv", "venv"}


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
    check.add_argument("--jobs", "-j", type=int, default=0, help="parallel processes (0: one per core)")
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

    # Listed for --help only: main() hands these to their own modules (and parsers) before parsing.
    sub.add_parser("quantize", add_help=False,
                   help="repair, then quantize a model to INT8 + FP16 (`onnx-lint quantize --help`)")
    sub.add_parser("server", add_help=False, help="run the language server over stdio (`onnx-lint server --help`)")
    sub.add_parser("version", help="print versions of onnx-lint and its engines")
    return parser


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
        if args.command == "rule":
            return _cmd_rule(args)
        if args.command == "list-rules":
            return _cmd_list_rules(args)
        if args.command == "version":
            return _cmd_version()
        return _cmd_check(args)
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


# -- rule documentation ------------------------------------------------------------------
def _rule_docs():
    """Rule metadata for the formats, from the generated catalog: no rule module (nor onnx) is imported."""
    from onnx_lint.formats import RuleDoc
    from onnx_lint.lint.diagnostics import Severity
    from onnx_lint.rules import CATALOG

    return {code: RuleDoc(code, name, summary, Severity(severity), fixable, url)
            for code, name, summary, severity, fixable, url, _availability in CATALOG}


def _cmd_rule(args: argparse.Namespace) -> int:
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


def _cmd_list_rules(args: argparse.Namespace) -> int:
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


def _cmd_version() -> int:
    import importlib.metadata as md

    import onnx

    print(f"onnx-lint {__version__}")
    print(f"onnx {onnx.__version__} (IR {onnx.IR_VERSION}, opset {onnx.defs.onnx_opset_version()})")
    try:
        print(f"onnxruntime {md.version('onnxruntime')}")
    except md.PackageNotFoundError:
        print("onnxruntime not installed (symbolic fallback and quantize unavailable)")
    return 0


# -- check ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Job:
    """Everything a worker process needs to lint (and maybe fix) one file."""

    path: Path
    display: str
    enabled: frozenset[str]
    fix: bool
    diff: bool
    cache_root: Path | None
    fingerprint: str
    runtime_check: bool
    runtime_probe: bool = True
    inference_budget: float | None = None
    timings: bool = False


def _budget_arg(value: str) -> float:
    try:
        budget = float(value)
    except ValueError:
        budget = 0.0
    if not budget > 0 or budget != budget or budget == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, not {value!r}")
    return budget


def discover(paths: Sequence[str]) -> tuple[list[Path], list[str]]:
    """Model files under the given paths (folders searched for ``*.onnx``), and missing paths."""
    found: list[Path] = []
    missing: list[str] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            for folder, dirs, files in os.walk(path):
                dirs[:] = sorted(d for d in dirs if d not in DEFAULT_EXCLUDES and not d.startswith("."))
                found.extend(Path(folder, f) for f in sorted(files) if f.endswith(".onnx"))
        elif path.exists() or path.is_symlink():
            found.append(path)
        else:
            missing.append(raw)
    unique: list[Path] = []
    seen: set[Path] = set()
    for p in found:
        key = p.resolve()
        if key not in seen:
            seen.add(key)
            unique.append(p)
    return unique, missing


def _split(value: str | None) -> tuple[str, ...] | None:
    if value is None:
        return None
    return tuple(c.strip().upper() for c in value.split(",") if c.strip())


def _cmd_check(args: argparse.Namespace) -> int:
    from onnx_lint.lint.config import Settings, find_config, load_config, merge_cli
    from onnx_lint.rules import CODES

    if args.fix and args.diff:
        raise ConfigError("--fix and --diff cannot be combined: --diff writes nothing")
    config_path = Path(args.config) if args.config else find_config(Path(args.paths[0] if args.paths else "."))
    settings = load_config(config_path) if config_path else Settings()
    settings = merge_cli(settings, select=_split(args.select), extend_select=_split(args.extend_select),
                         ignore=_split(args.ignore))
    all_codes = list(CODES)
    settings.check_selectors(all_codes)
    timed = args.timings or args.timings_format is not None
    files, missing = discover(args.paths)
    if timed and any(m in ("text", "json") for m in missing):
        raise ConfigError("--timings takes no value; for JSON timings use `--timings-format json`")
    root = config_path.parent if config_path else Path.cwd()
    if args.shard:
        from onnx_lint.commands.shard import in_shard, parse_shard

        shard = parse_shard(args.shard)
        files = [path for path in files if in_shard(path, root, shard)]
    probe = settings.runtime_probe and not args.no_runtime_probe
    budget = args.inference_budget if args.inference_budget is not None else settings.inference_budget
    fingerprint = repr((settings.select, settings.extend_select, settings.ignore, probe, budget))
    jobs = [
        Job(path, str(path), frozenset(c for c in all_codes
                                        if settings.enabled(c, all_codes, all_codes, path)),
            args.fix, args.diff, None if args.no_cache else root, fingerprint, not args.no_runtime_check, probe,
            budget, timed)
        for path in files
    ]
    results = _run_jobs(jobs, args.jobs)
    from onnx_lint.lint.file_result import FileResult, unreadable_diagnostic

    for raw in missing:
        results.append(FileResult(Path(raw), raw, [unreadable_diagnostic(raw, "no such file or folder")],
                                  unreadable=True, missing=True))
    return _report(args, results, root)


def _run_jobs(jobs: list[Job], requested: int) -> list:
    """Answer cache hits here (no onnx import), then lint the misses, in worker processes if asked."""
    results: dict[int, object] = {}
    misses: list[int] = []
    for i, job in enumerate(jobs):
        hit = cached_result(job)
        if hit is None:
            misses.append(i)
        else:
            results[i] = hit
    workers = requested if requested > 0 else (os.cpu_count() or 1)
    workers = max(1, min(workers, len(misses)))
    if workers == 1:
        for i in misses:
            results[i] = process_job(jobs[i])
    else:  # a pool only here: concurrent.futures.process and multiprocessing cost a one-file run ~10 ms
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        fork = sys.platform.startswith("linux")
        if fork:  # import once here: forked workers inherit it instead of each paying for it
            import onnx_lint.fixes.fixer
            import onnx_lint.rules.registry  # noqa: F401
        context = multiprocessing.get_context("fork" if fork else "spawn")
        from onnx_lint.engines.sandbox import die_with_parent

        # A worker dies with the CLI (its probe children die with it in turn), even on SIGKILL.
        with ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=die_with_parent,
                                 initargs=(os.getpid(),)) as pool:
            chunk = max(1, len(misses) // (workers * 8))
            for i, result in zip(misses, pool.map(process_job, [jobs[i] for i in misses], chunksize=chunk)):
                results[i] = result
    return [results[i] for i in range(len(jobs))]


def _cache(job: Job):
    if not job.cache_root:
        return None  # --no-cache: not even the module (its version lookups cost 20 ms)
    from onnx_lint.commands.cache import LintCache

    return LintCache(job.cache_root, job.fingerprint + repr(sorted(job.enabled)))


def cached_result(job: Job):
    """The file's result from the cache, or None when it must be linted (or has something to fix)."""
    from onnx_lint.lint.file_result import FileResult, is_unreadable

    if job.timings:
        return None  # a timed run lints every file
    cache = _cache(job)
    cached = cache.get(job.path, job.display) if cache is not None else None
    if cached is None or ((job.fix or job.diff) and any(d.fixable for d in cached)):
        return None
    return FileResult(job.path, job.display, cached, unreadable=any(map(is_unreadable, cached)))


def process_job(job: Job):
    """Lint one file that the cache could not answer, then fix or diff it as asked (timed if asked)."""
    if not job.timings:
        return _process_job(job)
    from onnx_lint.base.timings import recording

    with recording() as clock:
        result = _process_job(job)
    result.timings, result.wall = clock.seconds, clock.total
    return result


def _process_job(job: Job):
    from onnx_lint.base.timings import IMPORTS, step
    from onnx_lint.lint.file_result import FileResult

    enabled = job.enabled.__contains__
    cache = _cache(job)
    with step(IMPORTS):  # only a cache miss pays for onnx and the rules
        from onnx_lint.base.errors import FixError
        from onnx_lint.fixes.fixer import text_diff
        from onnx_lint.fixes.session import FixSession
        from onnx_lint.rules import ALL_RULES

    try:
        session = FixSession.lint(job.path, job.display, ALL_RULES, enabled, runtime_probe=job.runtime_probe,
                                  inference_budget=job.inference_budget)
        result, ctx = session.result, session.ctx
        # A result an engine's budget cut short depends on the machine's load: never cached.
        if ctx is not None and cache is not None and not result.internal_errors and not ctx.oracle.expired:
            cache.put(job.path, result.diagnostics, ctx.loaded.external_locations)
        if ctx is None or not (job.fix or job.diff):
            return result
        plan = session.fix(write=job.fix, runtime_check=job.runtime_check)
        if plan is not None and job.diff:  # the plan's diagnostics are new objects: the result's own stay unfixed
            result.diff = text_diff(ctx.loaded, plan.data, job.display)
        return result
    except FixError as exc:  # nothing was written, and the result's diagnostics were never marked fixed
        result.internal_errors.append(f"fix failed: {exc}")
        return result
    except Exception as exc:  # last line of defence: name the file, never a traceback
        return FileResult(job.path, job.display, [], internal_errors=[
            f"{job.display}: internal error: {type(exc).__name__}: {exc}"])


def _report(args: argparse.Namespace, results: list, root: Path) -> int:
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
        Path(args.output_file).write_text(text)
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

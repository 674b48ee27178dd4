"""``onnx-lint check``: from the command line's paths and options to one result per file.

Files are found, answered from the cache where possible (no onnx import), otherwise linted
(and fixed or diffed, as asked) one ``Job`` each, in worker processes when there are several.
``commands.report`` prints what came back.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from onnx_lint.base.errors import ConfigError
from onnx_lint.commands.report import report

DEFAULT_EXCLUDES = {".git", ".hg", ".svn", "node_modules", "__pycache__", ".onnx-lint-cache", ".venv", "venv"}


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


def cmd_check(args: argparse.Namespace) -> int:
    from onnx_lint.lint.config import Settings, find_config, load_config, merge_cli
    from onnx_lint.rules import CODES

    if args.fix and args.diff:
        raise ConfigError("--fix and --diff cannot be combined: --diff writes nothing")
    skipped: list[str] = []
    config_path = Path(args.config) if args.config else find_config(Path(args.paths[0] if args.paths else "."),
                                                                     skipped)
    for warning in skipped:
        print(f"warning: {warning}", file=sys.stderr)
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
    return report(args, results, root)


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
    if not misses:
        return _lint(jobs, misses, workers, results)
    from onnx_lint.engines.warm_children import kept_warm

    # Each process keeps its sandboxed children warm (engines/warm_children.py): across many models, and
    # within one, where the runtime probe runs in the child that ONNX Runtime's load check started.
    with kept_warm():
        return _lint(jobs, misses, workers, results)


def _lint(jobs: list[Job], misses: list[int], workers: int, results: dict[int, object]) -> list:
    """Lint the cache misses, here or in ``workers`` processes; every job's result, in order."""
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

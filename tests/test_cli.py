"""The command line as a CI job or a person in a terminal meets it (docs/cli.md)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

import onnx
import pytest
from conftest import run_process
from onnx import TensorProto, helper

from examples import defects


@pytest.fixture
def project(tmp_path):
    """A folder of models with several defects, in nested folders."""
    models = tmp_path / "models"
    (models / "nested").mkdir(parents=True)
    onnx.save(defects.stale_rank0_output(), models / "rank0.onnx")
    onnx.save(defects.topk_untyped(), models / "nested" / "topk.onnx")
    onnx.save(defects.healthy_matmul(), models / "healthy.onnx")
    onnx.save(defects.custom_op_output(), models / "custom.onnx")
    (models / "notes.txt").write_text("not a model")
    return tmp_path


def test_plain_invocation_lints_folders_recursively(cli, project):
    run = cli("models", "--output-format", "concise", cwd=project)
    assert run.code == 1
    lines = [ln for ln in run.out.splitlines() if ": OL" in ln]
    assert any(ln.startswith("models/rank0.onnx:graph/output[0] 'Y': OL001 [*] ") for ln in lines)
    assert any("models/nested/topk.onnx:graph/node[0] 'TopK_0' (TopK): OL003" in ln for ln in lines)
    assert "notes.txt" not in run.out
    assert "Found 3 problems in 3 of 4 files checked." in run.out
    assert "[*] 2 fixable with the `--fix` option." in run.out


def test_full_format_names_the_engine_and_the_help(cli, project):
    run = cli("check", "models/rank0.onnx", cwd=project)
    assert "error: stale-rank-zero-output, derived by onnx" in run.out
    # The help line says what the fix does (the rule's fix title), and that it is safe.
    assert "help: Declare the computed shape [3, 5] on output 'Y' (safe fix: run `onnx-lint check --fix`)" in run.out


def test_json_output_has_the_public_shape(cli, project):
    found = cli("check", "models", "--output-format", "json", cwd=project).json()
    assert {d["code"] for d in found} == {"OL001", "OL003", "OL007"}
    for d in found:
        assert set(d) == {"file", "code", "name", "severity", "message", "location", "engine", "fix"}
        assert set(d["location"]) == {"path", "tensor", "node", "op_type"}
        assert d["severity"] in ("error", "warning", "info")


def test_json_after_fix_marks_applied_fixes(cli, project):
    found = cli("check", "models", "--fix", "--output-format", "json", cwd=project).json()
    applied = {d["code"] for d in found if d["fix"] and d["fix"]["applied"]}
    assert applied == {"OL001", "OL003"}


def test_sarif_output_is_code_scanning_ready(cli, project):
    run = cli("check", "models", "--output-format", "sarif", cwd=project)
    log = json.loads(run.out)
    assert log["version"] == "2.1.0"
    [sarif_run] = log["runs"]
    rule_ids = [r["id"] for r in sarif_run["tool"]["driver"]["rules"]]
    assert rule_ids == sorted(rule_ids) and "OL001" in rule_ids
    for result in sarif_run["results"]:
        assert rule_ids[result["ruleIndex"]] == result["ruleId"]
        location = result["locations"][0]
        assert location["physicalLocation"]["artifactLocation"]["uri"].startswith("models/")
        assert location["physicalLocation"]["region"] == {"startLine": 1}
        assert location["logicalLocations"][0]["fullyQualifiedName"].startswith("graph")
    again = json.loads(cli("check", "models", "--output-format", "sarif", cwd=project).out)
    prints = [r["partialFingerprints"] for r in sarif_run["results"]]
    assert prints == [r["partialFingerprints"] for r in again["runs"][0]["results"]]
    assert len({p["onnxLint/v1"] for p in prints}) == len(prints)


def test_github_and_junit_formats(cli, project):
    github = cli("check", "models", "--output-format", "github", cwd=project).out
    assert "::error title=onnx-lint (OL001),file=models/rank0.onnx,line=1::graph/output[0] 'Y'" in github
    assert "::notice title=onnx-lint (OL007)" in github
    junit = ET.fromstring(cli("check", "models", "--output-format", "junit", cwd=project).out)
    assert junit.get("failures") == "2"
    assert {s.get("name") for s in junit.iter("testsuite")} == {
        "models/rank0.onnx", "models/nested/topk.onnx", "models/custom.onnx"}


def test_output_file(cli, project):
    run = cli("check", "models", "--output-format", "json", "-o", "report.json", cwd=project)
    assert run.code == 1 and run.out == ""
    assert len(json.loads((project / "report.json").read_text())) == 3


def test_select_ignore_and_extend_select(cli, project):
    def codes(*args):
        return sorted({d["code"] for d in cli("check", "models", "--output-format", "json", *args,
                                              cwd=project).json()})

    assert codes("--select", "OL001") == ["OL001"]
    assert codes("--ignore", "OL00") == []
    assert codes("--select", "OL00", "--ignore", "OL001") == ["OL003", "OL007"]
    assert codes("--select", "OL001", "--extend-select", "OL007") == ["OL001", "OL007"]
    bad = cli("check", "models", "--select", "XX9", cwd=project)
    assert bad.code == 2 and "unknown rule selector 'XX9'" in bad.err


def test_statistics_and_exit_zero(cli, project):
    run = cli("check", "models", "--statistics", cwd=project)
    assert run.code == 1
    assert "1  OL001  [*]  stale-rank-zero-output" in run.out
    assert "1  OL007       underivable-output-shape" in run.out
    assert cli("check", "models", "--exit-zero", cwd=project).code == 0


def test_statistics_give_a_rule_one_row_whether_or_not_each_finding_is_fixable(cli, tmp_path):
    """OL003's fix is available for a TopK model but not behind a custom operator: still one row."""
    custom = helper.make_graph(
        [helper.make_node("Foo", ["X"], ["T"], domain="my.custom"), helper.make_node("Relu", ["T"], ["Y"])], "g",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2])])
    onnx.save(helper.make_model(custom, opset_imports=[helper.make_opsetid("", 21),
                                                       helper.make_opsetid("my.custom", 1)], ir_version=10),
              tmp_path / "custom.onnx")
    onnx.save(defects.topk_untyped(), tmp_path / "topk.onnx")
    rows = [ln for ln in cli("check", ".", "--statistics").out.splitlines() if "OL003" in ln]
    assert rows == ["    2  OL003  [*]  untyped-after-shape-inference"]


def test_summary_counts_files_with_problems_and_names_missing_paths(cli, project):
    run = cli("check", "models/rank0.onnx", "models/healthy.onnx", "no/such.onnx", cwd=project)
    assert run.code == 2
    assert "Found 1 problem in 1 of 2 files checked; 1 path does not exist." in run.out
    only_missing = cli("check", "no/such.onnx", cwd=project)
    assert only_missing.code == 2 and "No .onnx files found; 1 path does not exist." in only_missing.out
    (project / "empty").mkdir()
    assert cli("check", "empty", cwd=project).out.strip() == "No .onnx files found."


def test_help_lists_every_subcommand(cli):
    done = subprocess.run([sys.executable, "-m", "onnx_lint", "--help"], capture_output=True, text=True)
    assert done.returncode == 0
    for command in ("check", "rule", "list-rules", "quantize", "server", "version"):
        assert f"    {command}" in done.stdout, done.stdout


def test_info_notes_alone_do_not_fail(cli, project):
    assert cli("check", "models/custom.onnx", cwd=project).code == 0


def test_rule_and_list_rules(cli):
    run = cli("rule", "OL001")
    assert run.code == 0
    assert "## stale-rank-zero-output (OL001)" in run.out
    for heading in ("### What it does", "### Why does this matter?", "### Example", "### Fix safety"):
        assert heading in run.out
    assert run.out.rstrip().endswith("Documentation: https://onnx-lint.github.io/onnx-lint/rules/OL001/")
    assert json.loads(cli("rule", "OL001", "--output-format", "json").out)["url"] == \
        "https://onnx-lint.github.io/onnx-lint/rules/OL001/"
    assert "## dim-param-mismatch" in cli("rule", "dim-param-mismatch").out
    assert cli("rule", "OL999").code == 2
    listing = cli("list-rules").out
    for code in ("OL000", "OL001", "OL002", "OL003", "OL004", "OL005", "OL006", "OL007", "OL101"):
        assert code in listing
    as_json = json.loads(cli("list-rules", "--output-format", "json").out)
    assert {r["code"] for r in as_json} >= {"OL001", "OL003"}


def test_pyproject_configuration_and_per_file_ignores(cli, project):
    (project / "pyproject.toml").write_text(
        '[tool.onnx-lint]\nignore = ["OL007"]\n\n[tool.onnx-lint.per-file-ignores]\n"**/nested/*.onnx" = ["OL003"]\n')
    found = cli("check", "models", "--output-format", "json", cwd=project).json()
    assert {d["code"] for d in found} == {"OL001"}


def test_onnx_lint_toml_and_config_errors(cli, project):
    (project / "onnx-lint.toml").write_text('select = ["OL003"]\n')
    found = cli("check", "models", "--output-format", "json", cwd=project).json()
    assert {d["code"] for d in found} == {"OL003"}
    (project / "onnx-lint.toml").write_text('selct = ["OL003"]\n')
    run = cli("check", "models", cwd=project)
    assert run.code == 2 and "unknown key 'selct'" in run.err and "onnx-lint.toml" in run.err
    (project / "onnx-lint.toml").write_text('select = ["OL003"\n')
    run = cli("check", "models", cwd=project)
    assert run.code == 2 and "is not valid TOML" in run.err


def test_parallel_jobs_give_the_same_result(cli, project):
    one = cli("check", "models", "--output-format", "json", "--jobs", "1", "--no-cache", cwd=project).json()
    two = cli("check", "models", "--output-format", "json", "--jobs", "2", "--no-cache", cwd=project).json()
    assert one == two


def test_cache_is_used_and_invalidated(cli, project):
    first = cli("check", "models", "--output-format", "json", cwd=project).json()
    assert (project / ".onnx-lint-cache").is_dir()
    assert cli("check", "models", "--output-format", "json", cwd=project).json() == first
    shutil.copy(project / "models" / "healthy.onnx", project / "models" / "rank0.onnx")
    after = cli("check", "models", "--output-format", "json", cwd=project).json()
    assert "OL001" not in {d["code"] for d in after}


def test_a_same_size_replacement_with_its_mtime_kept_is_linted_again(cli, project):
    """``cp -p`` / ``rsync -t`` / an LFS checkout: same size, same mtime, other content."""
    model = project / "models" / "dims.onnx"
    onnx.save(defects.matmul([3, 5]), model)
    healthy = cli("check", "models/dims.onnx", "--output-format", "json", cwd=project).json()
    assert healthy == []
    mtime = model.stat().st_mtime_ns
    stale = project / "stale.onnx"
    onnx.save(defects.matmul([3, 6]), stale)  # one digit differs: the same number of bytes
    assert stale.stat().st_size == model.stat().st_size
    model.write_bytes(stale.read_bytes())  # in place, as cp -p does, then the mtime put back
    os.utime(model, ns=(mtime, mtime))
    after = cli("check", "models/dims.onnx", "--output-format", "json", cwd=project).json()
    assert [d["code"] for d in after] == ["OL002"]


def test_a_verdict_reached_without_an_engine_does_not_survive_its_install(project):
    """Lint while ONNX Runtime cannot be imported (OL007: neither its symbolic inference nor a run can
    shape the output), then with it: the real finding, not the cached note."""
    model = project / "models" / "gelu.onnx"
    onnx.save(defects.symbolic_fallback(), model)
    lint = ("import sys; from onnx_lint.cli import main; "
            "sys.exit(main(['check', 'models/gelu.onnx', '--output-format', 'json', '--jobs', '1']))")
    without = subprocess.run([sys.executable, "-c", "import sys; sys.modules['onnxruntime'] = None; " + lint],
                             cwd=project, capture_output=True, text=True)
    notes = {d["code"]: d["message"] for d in json.loads(without.stdout)}
    assert "OL001" not in notes and "onnxruntime" in notes["OL007"], without.stdout + without.stderr
    with_it = subprocess.run([sys.executable, "-c", lint], cwd=project, capture_output=True, text=True)
    codes = {d["code"] for d in json.loads(with_it.stdout)}
    assert "OL001" in codes and "OL007" not in codes, with_it.stdout + with_it.stderr


def test_a_warm_cache_answers_with_fixable_findings_without_linting(cli, project, monkeypatch):
    first = cli("check", "models", "--output-format", "json", "--jobs", "1", cwd=project).json()
    assert any(d["fix"] for d in first)  # fixable findings (with their edits) round-trip through the cache

    def no_lint(*args, **kwargs):
        raise AssertionError("linted although the cache holds the answer")

    monkeypatch.setattr("onnx_lint.lint.linter.lint_file", no_lint)
    assert cli("check", "models", "--output-format", "json", "--jobs", "1", cwd=project).json() == first


def test_fix_and_diff_together_is_a_usage_error(cli, project):
    run = cli("check", "models", "--fix", "--diff", cwd=project)
    assert run.code == 2 and "--diff" in run.err


def test_usage_error_exit_code(cli):
    assert cli("check", "--output-format", "xml").code == 2


def test_console_script_is_installed(tmp_path):
    exe = shutil.which("onnx-lint")
    assert exe, "pip install -e . installs the onnx-lint console script"
    done = subprocess.run([exe, "--version"], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.startswith("onnx-lint ")


def test_real_process_run_on_a_folder_with_fix(project):
    run = run_process("check", "models", "--fix", cwd=project)
    # The TopK model stays one ONNX Runtime refuses (k beyond the axis): typed, but never clean.
    assert run.code == 1, run.out + run.err
    assert "Found 4 problems in 3 of 4 files checked: 2 fixed, 2 remaining." in run.out
    assert ("models/nested/topk.onnx:graph/node[0] 'TopK_0' (TopK): OL102 ONNX inference fails at this node "
            "(Axis has less than the requested k elements)") in run.out


@pytest.mark.parametrize("args", [["check", "{folder}"], ["quantize", "{model}", "-o", "{out}"]],
                         ids=["check", "quantize"])
def test_a_reader_that_goes_away_gets_no_traceback(tmp_path, args):
    """`onnx-lint ... | head`: the reader closes the pipe before the report is printed."""
    model = tmp_path / "model.onnx"
    onnx.save(defects.stale_rank0_output(), model)
    argv = [a.format(folder=tmp_path, model=model, out=tmp_path / "q.onnx") for a in args]
    read_end, write_end = os.pipe()
    os.close(read_end)  # nobody will read: every write fails with EPIPE
    done = subprocess.run([sys.executable, "-m", "onnx_lint", *argv], stdout=write_end, stderr=subprocess.PIPE,
                          text=True, timeout=300)
    os.close(write_end)
    assert "Traceback" not in done.stderr and "BrokenPipeError" not in done.stderr, done.stderr
    assert done.returncode == 1


def test_timings_list_every_rule_and_engine_step_and_add_up_to_the_run(tmp_path):
    """`--timings-format json` (stderr) charges each step its exclusive time: the steps of a file sum to its run."""
    from onnx_lint.rules import CODES

    path = tmp_path / "stale.onnx"
    onnx.save_model(defects.DEFECTS["stale_rank0_output"][0](), path)
    run = run_process("check", "--timings-format", "json", "--fix", "--output-format", "json", str(path),
                      cwd=tmp_path)
    assert run.code == 0 and json.loads(run.out)[0]["fix"]["applied"]  # stdout is still the chosen format
    report = json.loads(run.err.strip().splitlines()[-1])
    steps, wall = report["files"][str(path)]["steps"], report["files"][str(path)]["wall"]
    assert {f"rule {code}" for code in CODES} <= set(steps)
    assert {"parse", "validate", "engine: onnx inference", "fix: plan and prove", "fix: write and runtime check",
            "import onnx, the engines and the rules"} <= set(steps)
    assert abs(sum(steps.values()) - wall) <= 0.001 + 0.01 * wall
    assert report["total"] == steps


def test_timings_is_a_plain_flag_before_the_path_and_its_table_lists_every_rule_that_ran(tmp_path):
    """`check --timings model.onnx`: the flag takes no value, so the path after it stays a path."""
    from onnx_lint.rules import CODES

    path = tmp_path / "model.onnx"
    onnx.save_model(defects.DEFECTS["stale_rank0_output"][0](), path)
    run = run_process("check", "--timings", str(path), "--ignore", "OL002", cwd=tmp_path)
    assert run.code == 1 and "OL001" in run.out and "invalid choice" not in run.err
    rows = {line.rsplit(None, 2)[0] for line in run.err.strip().splitlines()[2:-1]}
    assert {f"rule {code}" for code in CODES if code != "OL002"} <= rows and "rule OL002" not in rows
    assert {"parse", "validate", "engine: onnx inference"} <= rows


def test_the_old_timings_value_spelling_names_the_new_option(tmp_path):
    """`--timings json FILE` used to ask for JSON: "json" is now a path, and the error says what to write."""
    path = tmp_path / "model.onnx"
    onnx.save_model(defects.DEFECTS["stale_rank0_output"][0](), path)
    run = run_process("check", "--timings", "json", str(path), cwd=tmp_path)
    assert run.code == 2 and "--timings-format json" in run.err and not run.out


def test_timings_table_lints_past_the_cache_and_names_the_slowest_step_first(tmp_path, project):
    first = run_process("check", str(project), cwd=tmp_path)
    again = run_process("check", str(project), "--timings", cwd=tmp_path)
    assert again.out == first.out  # the second run would be a cache hit; a timed run lints every file anyway
    header, columns, *rows, total = again.err.strip().splitlines()
    assert header.startswith("Timings over") and "file" in header and columns.split()[0] == "step"
    seconds = [float(row.rsplit(None, 2)[-2]) for row in rows]
    assert seconds == sorted(seconds, reverse=True) and any(r.startswith("rule OL001") for r in rows)
    assert total.startswith("total") and total.endswith("100.0%")


_RECORD_MODULES = """
import json, sys
from onnx_lint.cli import main
code = main(sys.argv[1:])
print(json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""


def test_checking_one_healthy_model_imports_nothing_it_does_not_use(tmp_path):
    """Start-up is part of every run: one file needs no process pool, no TOML parser without a configuration
    file, no Python API module and neither fallback engine (the runtime probe, ONNX Runtime's symbolic
    inference) when ONNX's inference answers everything."""
    path = tmp_path / "model.onnx"
    onnx.save_model(defects.healthy_matmul(), path)
    done = subprocess.run([sys.executable, "-c", _RECORD_MODULES, "check", "--no-cache", "-q", str(path)],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    report = json.loads(done.stdout.strip().splitlines()[-1])
    modules = set(report["modules"])
    assert report["code"] == 0 and "onnx_lint.rules.registry" in modules
    unused = {"multiprocessing", "concurrent.futures.process", "tomllib", "onnx_lint.api",
              "onnx_lint.engines.probe", "onnx_lint.engines.symbolic", "onnxruntime"}
    assert not unused & modules


_COUNT_THREADS = """
import os, sys
from onnx_lint import cli
cli._one_blas_thread()
import numpy
print(os.environ["OPENBLAS_NUM_THREADS"], len(os.listdir("/proc/self/task")))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="threads are counted in /proc")
@pytest.mark.parametrize(("chosen", "expected"), [(None, "1"), ("2", "2")])
def test_the_command_line_starts_no_blas_threads_unless_the_user_asks_for_them(chosen, expected):
    """OpenBLAS would start a spinning helper thread per extra core as numpy loads (0.1 s of CPU each on every
    run, taken from the core the forked inference child uses); a user's own setting stays, as it reaches
    the --jobs workers too."""
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    if chosen is not None:
        env["OPENBLAS_NUM_THREADS"] = chosen
    done = subprocess.run([sys.executable, "-c", _COUNT_THREADS], env=env, capture_output=True, text=True, timeout=120)
    setting, threads = done.stdout.split()
    assert setting == expected
    if chosen is None:
        assert threads == "1"  # this process's own thread, and no other

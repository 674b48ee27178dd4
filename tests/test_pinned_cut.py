"""A pinned inference answers from the part of the graph the asked-for tensor depends on (engines/cut.py).

The cut is an optimisation of a proof, so it must change nothing a user sees: on every model that asks
for a pinned inference (the rule fixtures, the committed real exports, a real model from PyPI and a
chain of attention-like reshapes), the findings and the bytes ``--fix`` writes are the same whether the
whole graph runs pinned or only the cut does; and on the chain the cut infers a small part of the graph.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper
from real_models import package_root
from test_fix_proofs import _fixable_models
from truth import runtime_violations

from onnx_lint import api
from onnx_lint.engines import cut


def reshape_chain(blocks: int = 40) -> onnx.ModelProto:
    """x[batch, seq, 64] through ``blocks`` attention-like head splits: a Reshape to [batch, -1, 16] (ONNX
    cannot divide seq * 64 by 16, so dim 1 is anonymous), Relu, and a Reshape back to [batch, seq, 64]
    from the input's own Shape. Every fourth split's value_info is declared with a stale 7 in dim 1."""
    nodes, inits, value_info = [], [], []
    inits.append(numpy_helper.from_array(np.array([-1, 16], dtype=np.int64), "tail"))
    inits.append(numpy_helper.from_array(np.array([64], dtype=np.int64), "width"))
    inits.append(numpy_helper.from_array(np.array([0], dtype=np.int64), "zero"))
    inits.append(numpy_helper.from_array(np.array([0, 1], dtype=np.int64), "lead"))
    current = "x"
    for i in range(blocks):
        nodes += [
            h.make_node("Shape", [current], [f"s{i}"]),
            h.make_node("Gather", [f"s{i}", "zero"], [f"b{i}"]),
            h.make_node("Concat", [f"b{i}", "tail"], [f"t{i}"], axis=0),
            h.make_node("Reshape", [current, f"t{i}"], [f"heads{i}"]),
            h.make_node("Relu", [f"heads{i}"], [f"act{i}"]),
            h.make_node("Shape", ["x"], [f"xs{i}"]),
            h.make_node("Gather", [f"xs{i}", "lead"], [f"bs{i}"]),
            h.make_node("Concat", [f"bs{i}", "width"], [f"back{i}"], axis=0),
            h.make_node("Reshape", [f"act{i}", f"back{i}"], [f"y{i}"]),
        ]
        if i % 4 == 0:
            value_info.append(h.make_tensor_value_info(f"heads{i}", T.FLOAT, ["batch", 7, 16]))
        current = f"y{i}"
    graph = h.make_graph(nodes, "chain", [h.make_tensor_value_info("x", T.FLOAT, ["batch", "seq", 64])],
                         [h.make_tensor_value_info(current, T.FLOAT, ["batch", "seq", 64])], inits,
                         value_info=value_info)
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 17)], ir_version=8)


def _models(tmp_path: Path) -> list[Path]:
    paths = _fixable_models(tmp_path)
    onnx.save(reshape_chain(), chain := tmp_path / "reshape_chain.onnx")
    paths.append(chain)
    root = package_root("khmersm")
    if root is not None:  # a real export whose computed Reshape targets ask the pinned runs (OL108)
        folder = tmp_path / "khmersm"
        folder.mkdir()
        for name in ("model.onnx", "model.onnx.data"):
            shutil.copy(root / name, folder / name)
        paths.append(folder / "model.onnx")
    return paths


def _whole_graph_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cut, "MIN_CUT_NODES", 0)
    monkeypatch.setattr(cut, "MAX_CUT_SHARE", 0.0)


def _outcome(path: Path) -> tuple[list, bytes | None]:
    """The findings and the fixed model's bytes (``None``: nothing to fix); the file is left as it was."""
    original = path.read_bytes()
    report = api.check(path)
    fixed = api.fix(path)
    path.write_bytes(original)
    return list(report.diagnostics), fixed.model.SerializeToString() if fixed.modified else None


def test_findings_and_fixes_are_the_same_with_the_whole_graph_pinned(tmp_path, monkeypatch):
    paths = _models(tmp_path)
    cut_outcomes = [_outcome(path) for path in paths]
    _whole_graph_only(monkeypatch)
    whole_outcomes = [_outcome(path) for path in paths]
    for path, mine, whole in zip(paths, cut_outcomes, whole_outcomes):
        assert mine == whole, path.name
    assert sum(bool(findings) for findings, _ in cut_outcomes) > 20


def test_the_chain_is_proven_from_small_cuts_and_onnx_runtime_agrees_with_the_fix(cli, tmp_path, monkeypatch):
    path = tmp_path / "chain.onnx"
    model = reshape_chain()
    onnx.save(model, path)
    inferred: list[int] = []
    real = cut.run_onnx_inference

    def counting(model: onnx.ModelProto, *args: object, **kwargs: object) -> onnx.ModelProto:
        inferred.append(len(model.graph.node))
        return real(model, *args, **kwargs)

    monkeypatch.setattr(cut, "run_onnx_inference", counting)
    findings = api.check(path).diagnostics
    stale = sorted(d.location.tensor for d in findings if d.code == "OL005")
    assert stale == sorted(f"heads{i}" for i in range(0, 40, 4))
    assert inferred and max(inferred) <= 5  # the split alone: Shape, Gather, Concat, Reshape (of 360 nodes)
    monkeypatch.undo()
    run = cli("check", "--fix", str(path))
    assert run.code == 0, run.err
    assert runtime_violations(path, runs=((2, 3), (3, 5)), value_info=True) == []

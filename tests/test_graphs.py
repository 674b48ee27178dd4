"""The one graph-order layer every part uses: dependency order, cycles, what subgraphs read from outside."""

from __future__ import annotations

import onnx
import pytest
from onnx import TensorProto, helper

from onnx_lint.model.graphs import cyclic_nodes, outer_reads, sort_topologically, topological_order

F = TensorProto.FLOAT


def _graph(nodes, inputs=("X",), outputs=("Y",)):
    return helper.make_graph(nodes, "g", [helper.make_tensor_value_info(n, F, [2]) for n in inputs],
                             [helper.make_tensor_value_info(n, F, [2]) for n in outputs])


def _branch(reads: str, name: str) -> onnx.GraphProto:
    return helper.make_graph([helper.make_node("Identity", [reads], [name])], name, [],
                             [helper.make_tensor_value_info(name, F, [2])])


def _if_reading(outer: str) -> onnx.NodeProto:
    return helper.make_node("If", ["c"], ["Y"], name="If_0", then_branch=_branch(outer, "t"),
                            else_branch=_branch(outer, "e"))


def test_a_sorted_graph_keeps_its_file_order():
    graph = _graph([helper.make_node("Relu", ["X"], ["a"]), helper.make_node("Relu", ["a"], ["Y"])])
    assert topological_order(graph) == [0, 1] and cyclic_nodes(graph) == []
    assert sort_topologically(graph) is False


def test_an_unsorted_graph_is_put_in_dependency_order_with_every_node_unchanged():
    nodes = [helper.make_node("Relu", ["b"], ["Y"], name="last"), helper.make_node("Relu", ["a"], ["b"], name="mid"),
             helper.make_node("Relu", ["X"], ["a"], name="first")]
    graph = _graph(nodes)
    before = sorted(n.SerializeToString() for n in graph.node)
    assert topological_order(graph) == [2, 1, 0]
    assert sort_topologically(graph) is True
    assert [n.name for n in graph.node] == ["first", "mid", "last"]
    assert sorted(n.SerializeToString() for n in graph.node) == before
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=10)
    onnx.checker.check_model(model, full_check=True)


def test_a_subgraph_read_of_an_outer_tensor_is_a_dependency():
    """The If reads 'late' inside its branches, so it must come after the node producing 'late'."""
    graph = _graph([_if_reading("late"), helper.make_node("Relu", ["X"], ["late"], name="producer")],
                   inputs=("X", "c"))
    assert outer_reads(graph.node[0]) == {"late"}
    assert topological_order(graph) == [1, 0]


def test_a_name_defined_inside_the_subgraph_is_not_an_outer_read():
    inner = helper.make_graph([helper.make_node("Relu", ["X"], ["late"]), helper.make_node("Relu", ["late"], ["t"])],
                              "then", [], [helper.make_tensor_value_info("t", F, [2])])
    node = helper.make_node("If", ["c"], ["Y"], then_branch=inner, else_branch=_branch("X", "e"))
    assert outer_reads(node) == {"X"}


def test_nodes_on_or_behind_a_cycle_are_named_and_never_sorted():
    graph = _graph([helper.make_node("Relu", ["X"], ["a"]), helper.make_node("Add", ["a", "c"], ["b"]),
                    helper.make_node("Relu", ["b"], ["c"]), helper.make_node("Relu", ["c"], ["Y"])])
    assert topological_order(graph) == [0]
    assert cyclic_nodes(graph) == [1, 2, 3]
    with pytest.raises(ValueError, match="cycle"):
        sort_topologically(graph)

"""Keep subgraphs apart for data propagation: tensor names that repeat across graphs get their own.

optimum's merged decoders hold an If whose two branches reuse every tensor name. ONNX's
data propagation keeps one table of propagated values per *name* for the whole model, so
inside the second branch it fails ("Data for input 0 already exists"), leaves tensors there
untyped, and hands values computed in one branch to the other: a Reshape target of the
then-branch shapes the else-branch. Before inference, every name a subgraph defines that
another graph also defines gets a suffix that makes it unique, and the readers of that name
(inside the subgraph and the graphs nested in it) follow; after inference the suffix is
taken off again, so callers only ever see the model's own names.
"""

from __future__ import annotations

import onnx

from onnx_lint.model.graphs import ROOT, GraphScope, iter_scopes

# A name with this in it was given by ``separate``; no exporter writes it.
MARK = "\x1fonnx-lint-scope-"


def _defined(graph: onnx.GraphProto) -> set[str]:
    names = {v.name for v in graph.input}
    names.update(t.name for t in graph.initializer)
    names.update(t.values.name for t in graph.sparse_initializer)
    for node in graph.node:
        names.update(n for n in node.output if n)
    return names


def separate(model: onnx.ModelProto) -> int:
    """Rename, in place, the names subgraphs define that another graph defines too; how many."""
    scopes = list(iter_scopes(model))
    if len(scopes) == 1:
        return 0
    defined = {scope.path: _defined(scope.graph) for scope in scopes}
    count: dict[str, int] = {}
    for names in defined.values():
        for name in names:
            count[name] = count.get(name, 0) + 1
    if all(count[name] == 1 for path, names in defined.items() if path != ROOT for name in names):
        return 0
    renamed = 0
    mappings: dict[str, dict[str, str]] = {ROOT: {}}
    for index, scope in enumerate(scopes):
        if scope.path == ROOT:
            continue
        parent = scope.parent.path if scope.parent is not None else ROOT
        mapping = dict(mappings.get(parent, {}))
        own = defined[scope.path]
        for name in own:
            if count[name] > 1:
                mapping[name] = f"{name}{MARK}{index}"
                renamed += 1
            else:
                mapping.pop(name, None)  # defined here: an outer rename does not reach it
        mappings[scope.path] = mapping
        if mapping:
            _apply(scope, mapping)
    return renamed


def _apply(scope: GraphScope, mapping: dict[str, str]) -> None:
    graph = scope.graph
    for node in graph.node:
        for i, name in enumerate(node.input):
            if name in mapping:
                node.input[i] = mapping[name]
        for i, name in enumerate(node.output):
            if name in mapping:
                node.output[i] = mapping[name]
    for value in (*graph.input, *graph.output):
        if value.name in mapping:
            value.name = mapping[value.name]
    for tensor in (*graph.initializer, *(sparse.values for sparse in graph.sparse_initializer)):
        if tensor.name in mapping:
            tensor.name = mapping[tensor.name]


def restore(model: onnx.ModelProto) -> None:
    """Take ``separate``'s suffixes off every name of every subgraph, in place."""
    for scope in iter_scopes(model):
        if scope.path == ROOT:
            continue
        graph = scope.graph
        for node in graph.node:
            for field in (node.input, node.output):
                for i, name in enumerate(field):
                    if _marked(name):
                        field[i] = name.split(MARK, 1)[0]
        for value in (*graph.input, *graph.output, *graph.value_info):
            if _marked(value.name):
                value.name = value.name.split(MARK, 1)[0]
        for tensor in (*graph.initializer, *(sparse.values for sparse in graph.sparse_initializer)):
            if _marked(tensor.name):
                tensor.name = tensor.name.split(MARK, 1)[0]


def _marked(name: object) -> bool:
    """A name ``separate`` suffixed; protobuf hands a name that is not valid UTF-8 over as ``bytes``, which it
    never suffixes (such a model is refused later, by name validation, with its own message)."""
    return isinstance(name, str) and MARK in name

"""How deep a model's subgraphs nest, read from the protobuf wire format without parsing it.

protobuf refuses a message nested deeper than its recursion limit with a bare DecodeError;
walking only the fields that lead to subgraphs names the cause instead.
"""

from __future__ import annotations

from onnx_lint.model.file_checks import read_varint

# upb's default recursion limit, in message levels; each nested If/Loop body costs three.
PROTOBUF_DEPTH_LIMIT = 100
# Only the fields that lead from a model to its subgraphs: message kind -> {field number: child kind}.
_NESTING_FIELDS = {"model": {7: "graph"}, "graph": {1: "node"}, "node": {5: "attribute"},
                   "attribute": {6: "graph", 11: "graph"}}
_MAX_SCANNED_FIELDS = 5_000_000


def subgraph_nesting(data: bytes) -> int:
    """How many message levels deep the graph/node/attribute chain goes, read from the wire format.

    Run only when protobuf refused the bytes, to tell a too-deep model from a corrupt one.
    Stops (returning what it saw) at the first malformed field.
    """
    view = memoryview(data)
    deepest = 0
    scanned = 0
    stack = [("model", 0, len(data), 1)]
    while stack:
        kind, pos, end, depth = stack.pop()
        deepest = max(deepest, depth)
        children = _NESTING_FIELDS[kind]
        while pos < end:
            scanned += 1
            if scanned > _MAX_SCANNED_FIELDS:
                return deepest
            key, after = read_varint(view, pos, end)
            if key is None or after is None:
                break
            pos = after
            number, wire = key >> 3, key & 7
            if wire == 0:
                _, after = read_varint(view, pos, end)
                if after is None:
                    break
                pos = after
            elif wire in (1, 5):
                pos += 8 if wire == 1 else 4
            elif wire == 2:
                length, after = read_varint(view, pos, end)
                if length is None or after is None or after + length > end:
                    break
                pos = after
                if number in children:
                    stack.append((children[number], pos, pos + length, depth + 1))
                pos += length
            else:
                break
    return deepest

"""A corpus of broken and odd model files, generated on the fly (docs/security.md, issue 6).

``CASES`` are files onnx-lint must refuse with one clear OL000 message naming
the file and the problem, without a traceback and without writing anything.
``EDGE_CASES`` are readable but unusual files (protobuf edge cases, huge
fields, odd types): onnx-lint lints them with its ordinary rules, never
crashes, and a ``--fix`` either writes a model the checker accepts or nothing.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

from examples import defects

Builder = Callable[[Path], Path]


@dataclass(frozen=True)
class Case:
    """A file that must be refused: ``problem`` is a phrase the OL000 message must contain."""

    name: str
    problem: str
    build: Builder


@dataclass(frozen=True)
class EdgeCase:
    """A readable oddity: ``codes`` are the rules it must trigger (and no OL000)."""

    name: str
    codes: frozenset[str]
    build: Builder


# -- protobuf wire format, for what onnx's Python API will not write ----------------------------
def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        low, n = n & 0x7F, n >> 7
        out.append(low | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _field(number: int, payload: bytes | int) -> bytes:
    """One protobuf field: length-delimited for bytes, a varint for an int."""
    if isinstance(payload, int):
        return _varint(number << 3) + _varint(payload)
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


# -- helpers -------------------------------------------------------------------------------------
def _write(folder: Path, name: str, data: bytes | onnx.ModelProto) -> Path:
    path = folder / name
    path.write_bytes(data if isinstance(data, bytes) else data.SerializeToString())
    return path


def _model(nodes, inputs, outputs, initializers=(), opsets=(("", 17),), **extra) -> onnx.ModelProto:
    graph = h.make_graph(list(nodes), "edge", list(inputs), list(outputs), list(initializers))
    return h.make_model(graph, opset_imports=[h.make_opsetid(d, v) for d, v in opsets], ir_version=8, **extra)


def _vi(name: str, shape, elem: int = T.FLOAT) -> onnx.ValueInfoProto:
    return h.make_tensor_value_info(name, elem, shape)


def _healthy() -> onnx.ModelProto:
    return defects.healthy_matmul()


def _stale() -> onnx.ModelProto:
    return defects.stale_rank0_output()


def _edit(base: Callable[[], onnx.ModelProto], change: Callable[[onnx.ModelProto], object]) -> Callable[
        [Path, str], Path]:
    def build(folder: Path, name: str) -> Path:
        model = base()
        change(model)
        return _write(folder, name, model)
    return build


def _case(name: str, problem: str, base: Callable[[], onnx.ModelProto],
          change: Callable[[onnx.ModelProto], object]) -> Case:
    build = _edit(base, change)
    return Case(name, problem, lambda f: build(f, f"{name}.onnx"))


def _edge(name: str, codes: set[str], base: Callable[[], onnx.ModelProto],
          change: Callable[[onnx.ModelProto], object] = lambda m: None) -> EdgeCase:
    build = _edit(base, change)
    return EdgeCase(name, frozenset(codes), lambda f: build(f, f"{name}.onnx"))


def _external(folder: Path, name: str, location: str, length: int | None = None,
              offset: str | None = None, length_text: str | None = None) -> Path:
    model = _healthy()
    weight = model.graph.initializer[0]
    weight.ClearField("raw_data")
    del weight.float_data[:]
    weight.data_location = T.EXTERNAL
    if location is not None:
        weight.external_data.add(key="location", value=location)
    if offset is not None:
        weight.external_data.add(key="offset", value=offset)
    if length is not None or length_text is not None:
        weight.external_data.add(key="length", value=length_text or str(length))
    return _write(folder, name, model)


def _outside(folder: Path, name: str, size: int = 256) -> Path:
    """A file beside the model folder, which no check may read."""
    outside = folder.parent / f"{folder.name}-{name}"
    outside.write_bytes(b"\0" * size)
    return outside


def _link(folder: Path, name: str, target: Path) -> None:
    link = folder / name
    if link.is_symlink() or link.exists():
        link.unlink()
    os.symlink(target, link)


# -- refused: not a model at all ----------------------------------------------------------------
def _cycle(folder: Path) -> Path:
    return _write(folder, "cycle.onnx", _model(
        [h.make_node("Relu", ["b"], ["a"], name="first"), h.make_node("Neg", ["a"], ["b"], name="second")],
        [_vi("X", [1])], [_vi("a", [1])]))


def _duplicate_graph_field(folder: Path) -> Path:
    """Field 7 twice: protobuf merges both graphs into one that defines every name twice."""
    model = _healthy()
    twice = model.SerializeToString() + _field(7, model.graph.SerializeToString())
    return _write(folder, "duplicate_graph.onnx", twice)


def _deep_nesting(folder: Path, levels: int = 300) -> Path:
    """If inside If, ``levels`` deep: written by hand, as Python's recursion would stop first."""
    graph = h.make_graph([h.make_node("Identity", ["X"], ["o"])], "g0", [], [_vi("o", [3, 4])]).SerializeToString()
    output = _vi("o", [3, 4]).SerializeToString()
    for i in range(levels):
        attribute = _field(1, b"then_branch") + _field(6, graph) + _field(20, onnx.AttributeProto.GRAPH)
        node = _field(1, b"c") + _field(2, b"o") + _field(4, b"If") + _field(5, attribute)
        graph = _field(1, node) + _field(2, f"g{i}".encode()) + _field(12, output)
    return _write(folder, "deep_nesting.onnx", _field(1, 8) + _field(7, graph) + _field(8, _field(2, 17)))


def _invalid_utf8(folder: Path) -> Path:
    """Protobuf hands invalid UTF-8 in a string field to Python as bytes, not as an error."""
    return _write(folder, "invalid_utf8.onnx", _stale().SerializeToString().replace(b"MatMul_0", b"Mat\xff\xfel_0"))


def _over_2gib(folder: Path) -> Path:
    """A sparse file: its size is refused from ``stat`` alone, so no disk space is used."""
    path = folder / "over_2gib.onnx"
    with path.open("wb") as handle:
        handle.truncate(2**31 + 4096)
    return path


def _fifo(folder: Path) -> Path:
    path = folder / "fifo.onnx"
    os.mkfifo(path)
    return path


def _dangling(folder: Path) -> Path:
    _link(folder, "dangling.onnx", folder / "gone.onnx")
    return folder / "dangling.onnx"


# -- refused: hostile or broken external data ---------------------------------------------------
def _symlink_out(folder: Path) -> Path:
    _link(folder, "weights_link.bin", _outside(folder, "outside.bin"))
    return _external(folder, "symlink_out.onnx", "weights_link.bin")


def _symlinked_folder_out(folder: Path) -> Path:
    outside = folder.parent / f"{folder.name}-outside-dir"
    outside.mkdir(exist_ok=True)
    (outside / "w.bin").write_bytes(b"\0" * 256)
    _link(folder, "linked_dir", outside)
    return _external(folder, "symlinked_folder.onnx", "linked_dir/w.bin")


def _short_data(folder: Path) -> Path:
    (folder / "short.bin").write_bytes(b"\0" * 8)
    return _external(folder, "short_external.onnx", "short.bin")


def _offset_past_end(folder: Path) -> Path:
    (folder / "offset.bin").write_bytes(b"\0" * 256)
    return _external(folder, "offset_past_end.onnx", "offset.bin", offset="4096", length=80)


def _shared_file_short(folder: Path) -> Path:
    """Several tensors in one file, checked with one stat: the tensor that runs past its end is named."""
    first = _external(folder, "shared_short.onnx", "shared.bin", offset="0", length=60)
    model = onnx.load(first, load_external_data=False)
    for i, offset in enumerate((64, 128, 4096, 192)):
        tensor = model.graph.initializer.add()
        tensor.CopyFrom(model.graph.initializer[0])
        tensor.name = f"tail{i}"
        tensor.external_data[1].value = str(offset)
    (folder / "shared.bin").write_bytes(b"\0" * 256)
    return _write(folder, "shared_short.onnx", model)


def _location_is_folder(folder: Path) -> Path:
    (folder / "weights_dir").mkdir(exist_ok=True)
    return _external(folder, "location_is_folder.onnx", "weights_dir")


def _non_integer_length(folder: Path) -> Path:
    (folder / "w.bin").write_bytes(b"\0" * 256)
    return _external(folder, "non_integer_length.onnx", "w.bin", length_text="eighty")


def _negative_offset(folder: Path) -> Path:
    (folder / "w.bin").write_bytes(b"\0" * 256)
    return _external(folder, "negative_offset.onnx", "w.bin", offset="-16")


def _constant_reshape() -> onnx.ModelProto:
    shape = h.make_node("Constant", [], ["shape"], value=numpy_helper.from_array(np.array([-1, 4], np.int64)))
    return _model([shape, h.make_node("Reshape", ["X", "shape"], ["Y"])], [_vi("X", [2, 4])], [_vi("Y", [2, 4])])


def _resize_constant(model: onnx.ModelProto, count: int) -> None:
    """Give the first Constant's tensor ``count`` elements of dims but keep its single value."""
    node = next(n for n in model.graph.node if n.op_type == "Constant")
    tensor = node.attribute[0].t
    tensor.name = "shape"
    del tensor.dims[:]
    tensor.dims.append(count)
    if tensor.HasField("raw_data"):
        tensor.ClearField("raw_data")
    del tensor.int64_data[:]
    tensor.int64_data.append(-1)


CASES: list[Case] = [
    # not a model
    Case("empty", "empty file", lambda f: _write(f, "empty.onnx", b"")),
    Case("random-bytes", "not a valid ONNX protobuf",
         lambda f: _write(f, "random.onnx", np.random.default_rng(7).bytes(4096))),
    Case("truncated", "not a valid ONNX protobuf",
         lambda f: _write(f, "truncated.onnx", _healthy().SerializeToString()[:200])),
    Case("tensor-proto", "not",
         lambda f: _write(f, "tensor.onnx", numpy_helper.from_array(np.ones((4, 4), np.float32)).SerializeToString())),
    Case("node-proto", "not", lambda f: _write(f, "node.onnx", h.make_node("Relu", ["x"], ["y"]).SerializeToString())),
    Case("text-file", "not", lambda f: _write(f, "readme.onnx", b"this is not a model\n" * 20)),
    Case("no-graph", "no graph",
         lambda f: _write(f, "no_graph.onnx", onnx.ModelProto(ir_version=8).SerializeToString())),
    Case("invalid-utf8-node-name", "not valid UTF-8", _invalid_utf8),
    Case("invalid-utf8-op-type", "not valid UTF-8", lambda f: _write(f, "invalid_utf8_op.onnx", _model(
        [h.make_node("Relu", ["X"], ["Y"])], [_vi("X", [3])], [_vi("Y", [])]).SerializeToString().replace(
        b"Relu", b"Re\xffu"))),
    Case("corrupt-length", "not a valid ONNX protobuf", lambda f: _write(
        f, "corrupt_length.onnx", _stale().SerializeToString().replace(b"MatMul_0", b"MatMul0"))),
    Case("invalid-utf8-domain", "not valid UTF-8", lambda f: _write(
        f, "invalid_utf8_domain.onnx", _field(1, 8) + _field(7, _stale().graph.SerializeToString())
        + _field(8, _field(1, b"com.\xfe") + _field(2, 1)) + _field(8, _field(2, 17)))),
    Case("deeply-nested-subgraphs", "nested more than 100 protobuf levels", _deep_nesting),
    Case("over-2-gib", "cannot exceed 2 GiB", _over_2gib),
    Case("fifo", "not a regular file", _fifo),
    Case("dangling-symlink", "broken symbolic link", _dangling),
    Case("graph-proto", "not", lambda f: _write(f, "graph.onnx", _healthy().graph.SerializeToString())),
    # not usable: versions
    _case("future-ir", "IR version 99", _healthy, lambda m: setattr(m, "ir_version", 99)),
    _case("missing-ir", "ir_version is missing", _healthy, lambda m: m.ClearField("ir_version")),
    _case("future-opset", "opset ai.onnx 999", _healthy, lambda m: setattr(m.opset_import[0], "version", 999)),
    _case("negative-opset", "version -5 is not a valid version", _stale,
          lambda m: setattr(m.opset_import[0], "version", -5)),
    _case("no-opset", "imports no opset", _healthy, lambda m: m.ClearField("opset_import")),
    # not usable: structure
    Case("cycle", "cycle", _cycle),
    Case("duplicate-graph-field", "twice", _duplicate_graph_field),
    _case("duplicate-node-output", "defines tensor 'Y' twice", _healthy,
          lambda m: m.graph.node.append(h.make_node("Relu", ["X"], ["Y"], name="again"))),
    _case("duplicate-initializer", "'W' twice as an initializer", _healthy,
          lambda m: m.graph.initializer.append(numpy_helper.from_array(np.ones((4, 5), np.float32), "W"))),
    _case("duplicate-graph-input", "'X' twice as a graph input", _healthy,
          lambda m: m.graph.input.append(_vi("X", [3, 4]))),
    _case("initializer-negative-dim", "negative dim", _healthy,
          lambda m: m.graph.initializer[0].dims.__setitem__(0, -4)),
    _case("initializer-1e27-elements", "need 4000000000000000000000000000", _healthy,
          lambda m: (m.graph.initializer[0].ClearField("dims"), m.graph.initializer[0].dims.extend([10**9] * 3))),
    _case("initializer-short-raw-data", "holds 7 bytes of data but dims [4, 5] need 80", _healthy,
          lambda m: setattr(m.graph.initializer[0], "raw_data", b"\0" * 7)),
    _case("constant-mis-sized", "constant tensor 'shape' holds 1 values but dims [300000000] need 300000000",
          lambda: _constant_reshape(), lambda m: _resize_constant(m, 300_000_000)),
    _case("subgraph-attribute-with-a-slash", "cannot be addressed", defects.if_branch_stale,
          lambda m: setattr(m.graph.node[0].attribute[0], "name", "then/branch")),
    _case("initializer-typed-data-count", "holds 3 values but dims [2, 2] need 4", _healthy,
          lambda m: m.graph.initializer.append(T(name="extra", dims=[2, 2], data_type=T.INT64, int64_data=[1, 2, 3]))),
    # hostile or broken external data
    Case("missing-external", "is missing", lambda f: _external(f, "missing_external.onnx", "weights.bin")),
    Case("escaping-external", "escapes the model folder", lambda f: _external(f, "escape.onnx", "../../etc/passwd")),
    Case("escaping-external-nested", "escapes the model folder",
         lambda f: _external(f, "escape_nested.onnx", "sub/../../outside.bin")),
    Case("escaping-external-backslash", "escapes the model folder",
         lambda f: _external(f, "escape_backslash.onnx", "..\\..\\outside.bin")),
    Case("absolute-external", "absolute path", lambda f: _external(f, "absolute.onnx", "/etc/passwd")),
    Case("windows-drive-external", "absolute path", lambda f: _external(f, "drive.onnx", "C:\\weights.bin")),
    Case("nul-byte-external", "NUL byte", lambda f: _external(f, "nul.onnx", "w.bin\0../../etc/passwd")),
    Case("no-location-external", "names no file", lambda f: _external(f, "no_location.onnx", None)),
    Case("symlink-external", "outside the model folder", _symlink_out),
    Case("symlinked-folder-external", "outside the model folder", _symlinked_folder_out),
    Case("short-external", "has 8 bytes", _short_data),
    Case("offset-past-end-external", "needs bytes 4096..4176", _offset_past_end),
    Case("shared-file-short-external", "tensor 'tail2': external data file 'shared.bin' has 256 bytes but the "
         "tensor needs bytes 4096..4156", _shared_file_short),
    Case("folder-external", "is not a file", _location_is_folder),
    Case("non-integer-length-external", "are not integers", _non_integer_length),
    Case("negative-offset-external", "negative external data offset", _negative_offset),
]


# -- readable oddities --------------------------------------------------------------------------
def _extend_dims(value: onnx.ValueInfoProto, count: int) -> None:
    value.type.tensor_type.shape.dim.extend([onnx.TensorShapeProto.Dimension(dim_value=1)] * count)


def _unknown_fields(folder: Path) -> Path:
    """Fields from a future onnx, in ModelProto and GraphProto: kept byte for byte by --fix."""
    model = _stale()
    graph = model.graph.SerializeToString() + _field(999, b"future-graph-field")
    model.ClearField("graph")
    return _write(folder, "unknown_fields.onnx", model.SerializeToString() + _field(7, graph) + _field(1234, 42))


def _repeated_scalar_field(folder: Path) -> Path:
    """ir_version twice: protobuf keeps the last, as every reader does."""
    return _write(folder, "repeated_scalar_field.onnx", _stale().SerializeToString() + _field(1, 8))


def _nested_ifs(levels: int) -> onnx.ModelProto:
    """``levels`` nested If nodes (well under protobuf's limit); the outermost output is stale."""
    graph = h.make_graph([h.make_node("Identity", ["X"], ["o0"])], "g0", [], [_vi("o0", [3, 4])])
    for i in range(1, levels):
        other = h.make_graph([h.make_node("Identity", ["X"], [f"e{i}"])], f"e{i}", [], [_vi(f"e{i}", [3, 4])])
        graph = h.make_graph([h.make_node("If", ["c"], [f"o{i}"], then_branch=graph, else_branch=other,
                                          name=f"If_{i}")], f"g{i}", [], [_vi(f"o{i}", [3, 4])])
    return _model(graph.node, [_vi("X", [3, 4]), _vi("c", [], T.BOOL)], [_vi(f"o{levels - 1}", [])])


def _string_tensors() -> onnx.ModelProto:
    strings = numpy_helper.from_array(np.array([b"a", b"bb"], dtype=object), "S")
    constant = h.make_node("Constant", [], ["C"], value=h.make_tensor("cv", T.STRING, [1], [b"x"]))
    return _model([h.make_node("Identity", ["S"], ["Y"]), constant], [],
                  [_vi("Y", [], T.STRING), _vi("C", [1], T.STRING)], [strings])


def _sparse_initializer() -> onnx.ModelProto:
    values = numpy_helper.from_array(np.array([1.0, 2.0], np.float32), "W")
    indices = numpy_helper.from_array(np.array([0, 7], np.int64), "W_indices")
    model = _model([h.make_node("MatMul", ["X", "W"], ["Y"])], [_vi("X", [3, 4])], [_vi("Y", [])])
    model.graph.sparse_initializer.append(h.make_sparse_tensor(values, indices, [4, 5]))
    return model


def _local_function(recursive: bool = False) -> onnx.ModelProto:
    body = h.make_node("Loopy", ["a"], ["b"], domain="local") if recursive else h.make_node("Add", ["a", "a"], ["b"])
    function = h.make_function("local", "Loopy", ["a"], ["b"], [body],
                               [h.make_opsetid("", 17), h.make_opsetid("local", 1)])
    return _model([h.make_node("Loopy", ["X"], ["Y"], domain="local")], [_vi("X", [3, 4])], [_vi("Y", [])],
                  opsets=(("", 17), ("local", 1)), functions=[function])


def _training_ops() -> onnx.ModelProto:
    node = h.make_node("Adagrad", ["R", "T", "X", "G", "H"], ["X2", "H2"], domain="ai.onnx.preview.training")
    inputs = [_vi(n, [3]) for n in ("X", "G", "H")] + [_vi("R", []), _vi("T", [], T.INT64)]
    return _model([node], inputs, [_vi("X2", []), _vi("H2", [3])], opsets=(("", 17), ("ai.onnx.preview.training", 1)))


def _single(op: str, domain: str = "", output=(), elem: int = T.FLOAT,
            opsets=(("", 17),)) -> Callable[[], onnx.ModelProto]:
    return lambda: _model([h.make_node(op, ["X"], ["Y"], domain=domain)], [_vi("X", [3])],
                          [_vi("Y", list(output), elem)], opsets=opsets)


def _sequence_output() -> onnx.ModelProto:
    return _model([h.make_node("SequenceConstruct", ["X", "X"], ["S"])], [_vi("X", [3])],
                  [h.make_tensor_sequence_value_info("S", T.FLOAT, [])])


def _attribute_of_wrong_type() -> onnx.ModelProto:
    node = h.make_node("Transpose", ["X"], ["Y"])
    attr = node.attribute.add(name="perm", type=onnx.AttributeProto.INT)
    attr.s = b"zz"
    return _model([node], [_vi("X", [3, 4])], [_vi("Y", [])])


def _set_dim(value: onnx.ValueInfoProto, index: int, dim: int | str) -> None:
    target = value.type.tensor_type.shape.dim[index]
    if isinstance(dim, str):
        target.dim_param = dim
    else:
        target.dim_value = dim


def _many_value_info(model: onnx.ModelProto) -> None:
    model.graph.value_info.extend(_vi(f"unused_{i}", [1]) for i in range(200_000))


def _many_opsets(model: onnx.ModelProto) -> None:
    model.opset_import.extend(h.make_opsetid(f"com.example.d{i}", 1) for i in range(20_000))


def _edge_file(name: str, codes: set[str], build: Builder) -> EdgeCase:
    return EdgeCase(name, frozenset(codes), build)


EDGE_CASES: list[EdgeCase] = [
    _edge_file("unknown-fields", {"OL001"}, _unknown_fields),
    _edge_file("repeated-scalar-field", {"OL001"}, _repeated_scalar_field),
    _edge("huge-repeated-dims", {"OL004"}, _stale, lambda m: _extend_dims(m.graph.output[0], 100_000)),
    _edge("huge-repeated-value-info", {"OL001", "OL110"}, _stale, _many_value_info),  # 200k orphans: one note
    _edge("huge-repeated-opset-imports", set(), _healthy, _many_opsets),
    _edge("nested-subgraphs-20", {"OL001"}, lambda: _nested_ifs(20)),
    _edge("dim-1e9", {"OL001"}, _stale, lambda m: _set_dim(m.graph.input[0], 0, 10**9)),
    _edge("dim-int64-max", {"OL001"}, _stale, lambda m: _set_dim(m.graph.input[0], 0, 2**63 - 1)),
    _edge("dim-param-1mb", {"OL001"}, _stale, lambda m: _set_dim(m.graph.input[0], 0, "b" * 1_000_000)),
    _edge("metadata-20mb", {"OL001"}, _stale, lambda m: m.metadata_props.add(key="k", value="x" * 20_000_000)),
    _edge("string-tensors", {"OL001"}, _string_tensors),
    _edge("sparse-initializer", {"OL001"}, _sparse_initializer),  # the runtime probe shapes it: [3, 5]
    _edge("local-function", {"OL001"}, _local_function),
    _edge("recursive-local-function", {"OL007", "OL102"}, lambda: _local_function(recursive=True)),
    _edge("training-domain-op", {"OL001", "OL107"}, _training_ops),
    _edge("unknown-domain-not-imported", {"OL007", "OL102"}, _single("Foo", "com.acme", [3])),
    _edge("unknown-standard-op", {"OL007", "OL102"}, _single("NoSuchOp")),
    _edge("undefined-input-element-type", {"OL007"}, _stale, lambda m: setattr(m.graph.input[0].type.tensor_type,
                                                                              "elem_type", 0)),
    _edge("element-type-999", {"OL001", "OL006"}, _stale, lambda m: setattr(m.graph.output[0].type.tensor_type,
                                                                           "elem_type", 999)),
    _edge("sequence-output", set(), _sequence_output),
    _edge("attribute-of-wrong-type", {"OL102"}, _attribute_of_wrong_type),
    _edge("graph-attribute-on-relu", {"OL001", "OL102"}, _stale,
          lambda m: m.graph.node[0].attribute.append(h.make_attribute("body", h.make_graph([], "e", [], [])))),
    _edge("undefined-node-input", {"OL007", "OL104"}, lambda: _model([h.make_node("Relu", ["nowhere"], ["Y"])],
                                                           [_vi("X", [3])], [_vi("Y", [])])),
    _edge("output-not-produced", {"OL104"}, _healthy, lambda m: m.graph.output.append(_vi("ghost", []))),
    _edge("no-graph-outputs", set(), _healthy, lambda m: m.graph.ClearField("output")),
    _edge("old-ir-without-opset", {"OL007", "OL102"}, _healthy,
          lambda m: (setattr(m, "ir_version", 2), m.ClearField("opset_import"))),
    _edge("duplicate-opset-domain", {"OL001"}, _stale, lambda m: m.opset_import.append(h.make_opsetid("", 13))),
    # Found by the fuzzer: onnx's data propagation asks for a dim per element of a cast 1-D tensor
    # (about 140 GB here); the engines' memory ceiling turns that into a rerun without it.
    _edge("cast-of-a-billion-element-input", {"OL002", "OL006"}, lambda: _model(
        [h.make_node("Cast", ["X"], ["Y"], to=T.INT64)], [_vi("X", [10**9])], [_vi("Y", [3])])),
    _edge("empty-names", {"OL007", "OL102"},
          lambda: _model([h.make_node("Relu", ["X"], [""])], [_vi("X", [3])], [_vi("", [])])),
]
# Readable but invalid: reported by their own rule (OL101), fixable.
NEGATIVE_DIM_CASES: list[Case] = [
    _case("negative-input-dim", "is negative", _healthy, lambda m: _set_dim(m.graph.input[0], 0, -3)),
    _case("negative-output-dim", "is negative", _healthy, lambda m: _set_dim(m.graph.output[0], 0, -3)),
]


def build_corpus(folder: Path) -> dict[str, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    return {case.name: case.build(folder) for case in CASES}


def build_edge_corpus(folder: Path) -> dict[str, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    return {case.name: case.build(folder) for case in EDGE_CASES}

"""Reading models safely and writing them atomically.

Linting never needs weight bytes: models are parsed without external data, and
external references are validated with ``os.stat`` only, so nothing outside the
model's folder is ever opened (docs/design.md, step 1; docs/security.md).
"""

from __future__ import annotations

import errno
import math
import os
import stat
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import onnx
from google.protobuf.message import DecodeError

from onnx_lint.base.errors import FixError, ModelLoadError
from onnx_lint.model.file_checks import read_varint, stat_model_file, wire_problem
from onnx_lint.model.graphs import GraphScope, cyclic_nodes, iter_scopes, rebind_scopes


@dataclass(frozen=True)
class FileIdentity:
    """What says a file is still the one that was read: device, inode, size and mtime (ns).

    A fix is computed from the bytes read; renaming it over a file that another program
    replaced or edited since would silently undo that program's write.
    """

    device: int
    inode: int
    size: int
    mtime_ns: int

    @classmethod
    def of(cls, info: os.stat_result) -> FileIdentity:
        return cls(info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)

    @classmethod
    def now(cls, path: Path) -> FileIdentity | None:
        """The identity of ``path`` as it is on disk now; ``None`` when it is gone."""
        try:
            return cls.of(os.stat(path))
        except OSError:
            return None


@dataclass
class LoadedModel:
    """A model parsed from disk together with the exact bytes it came from."""

    path: Path
    data: bytes
    model: onnx.ModelProto
    external_locations: list[str] = field(default_factory=list)
    identity: FileIdentity | None = None  # the file as it was when ``data`` was read

    @cached_property
    def scopes(self) -> list[GraphScope]:
        """The model's graphs, found once and shared by every analysis of this model."""
        return list(iter_scopes(self.model))

    @property
    def scope_paths(self) -> list[str]:
        return [scope.path for scope in self.scopes]

    @property
    def has_external_data(self) -> bool:
        return bool(self.external_locations)

    def with_annotations(self, data: bytes, model: onnx.ModelProto, *, nodes_reordered: bool = False) -> LoadedModel:
        """``model`` (parsed from ``data``): this model with other annotations, as a fix makes it.

        Its scopes reuse this model's node scans, which an annotation fix leaves valid; a fix
        that reordered nodes (OL103) moved every node index, so its scopes are found afresh.
        """
        fixed = LoadedModel(self.path, data, model, self.external_locations, self.identity)
        if not nodes_reordered:
            fixed.__dict__["scopes"] = rebind_scopes(self.scopes, model)  # fills the cached_property
        return fixed

    def fresh_copy(self) -> onnx.ModelProto:
        """A new, independent parse of the original bytes (cheaper than CopyFrom)."""
        return onnx.ModelProto.FromString(self.data)


def read_model(path: str | os.PathLike[str]) -> LoadedModel:
    """Read and validate a model file; ``ModelLoadError`` names what is wrong."""
    loaded = read_unvalidated(path)
    validate_loaded(loaded)
    return loaded


def read_unvalidated(path: str | os.PathLike[str]) -> LoadedModel:
    """Read and parse a model file, nothing checked yet (``validate_loaded``).

    The file is opened once: its identity comes from that open file (what ``--fix`` re-checks
    before its rename), and its top-level protobuf fields are walked before a byte more is read,
    so a file that cannot be a model is refused without being read whole.
    """
    path = Path(path)
    shown = str(path)
    stat_model_file(path)
    try:
        # O_NONBLOCK: a FIFO swapped in after the stat must not block the open
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except OSError as exc:
        raise ModelLoadError(shown, f"cannot read file: {exc.strerror or exc}") from None
    with os.fdopen(fd, "rb") as handle:
        try:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise ModelLoadError(shown, "is not a regular file (a FIFO, socket or device); refusing to read it")
            problem = wire_problem(handle, info.st_size)
            if problem is not None:
                raise ModelLoadError(shown, f"not a valid ONNX protobuf: {problem}; refused before reading it")
            handle.seek(0)
            data = handle.read()
        except OSError as exc:
            raise ModelLoadError(shown, f"cannot read file: {exc.strerror or exc}") from None
    return LoadedModel(path, data, parse_model(data, shown), identity=FileIdentity.of(info))


def validate_loaded(loaded: LoadedModel) -> None:
    """The checks every analysis relies on (``validate_model``); ``ModelLoadError`` names what is wrong."""
    loaded.external_locations = validate_model(loaded.model, loaded.path, loaded.scopes)


def parse_model(data: bytes, shown: str) -> onnx.ModelProto:
    """Parse bytes as a ModelProto and reject anything that is not really one."""
    try:
        model = onnx.ModelProto.FromString(data)
    except DecodeError:
        depth = subgraph_nesting(data)
        if depth >= PROTOBUF_DEPTH_LIMIT:
            raise ModelLoadError(
                shown, f"subgraphs are nested more than {PROTOBUF_DEPTH_LIMIT} protobuf levels deep; "
                "protobuf refuses to parse such a file") from None
        raise ModelLoadError(
            shown, "not a valid ONNX protobuf (truncated or corrupt file, or not an ONNX model)"
        ) from None
    except RecursionError:
        raise ModelLoadError(shown, "protobuf nesting too deep to parse") from None
    if not model.HasField("graph"):
        raise ModelLoadError(shown, "not an ONNX model: the protobuf has no graph")
    if model.ir_version <= 0:
        raise ModelLoadError(shown, "not an ONNX model: ir_version is missing")
    return model


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


def _supported_opsets() -> dict[str, int]:
    from onnx.onnx_cpp2py_export import defs  # the C++ schema registry

    table = {domain: hi for domain, (_lo, hi) in defs.schema_version_map().items()}
    table["ai.onnx"] = table[""]
    return table


def validate_model(model: onnx.ModelProto, path: Path, scopes: list[GraphScope] | None = None) -> list[str]:
    """Structural checks that must pass before any analysis; returns external locations."""
    shown = str(path)
    if model.ir_version > onnx.IR_VERSION:
        raise ModelLoadError(
            shown,
            f"IR version {model.ir_version} is newer than the installed onnx "
            f"{onnx.__version__} supports (up to {onnx.IR_VERSION})",
        )
    supported = _supported_opsets()
    for opset in model.opset_import:
        if opset.version < 1:
            raise ModelLoadError(shown, f"opset {opset.domain or 'ai.onnx'} version {opset.version} is not "
                                 "a valid version (versions start at 1)")
        limit = supported.get(opset.domain)
        if limit is not None and opset.version > limit:
            domain = opset.domain or "ai.onnx"
            raise ModelLoadError(
                shown,
                f"opset {domain} {opset.version} is newer than the installed onnx "
                f"{onnx.__version__} supports (up to {limit})",
            )
    if model.ir_version >= 3 and not model.opset_import:
        raise ModelLoadError(shown, "not a usable ONNX model: it imports no opset")
    scopes = scopes if scopes is not None else list(iter_scopes(model))
    external = check_initializers(scopes, shown)
    check_names(model, scopes, shown)
    return check_external_data(external, path)


# The typed field that holds a tensor's values when it has no raw_data, for the types that map 1:1.
_TYPED_FIELDS: dict[int, str] = {
    onnx.TensorProto.FLOAT: "float_data", onnx.TensorProto.DOUBLE: "double_data",
    onnx.TensorProto.INT32: "int32_data", onnx.TensorProto.INT64: "int64_data",
    onnx.TensorProto.STRING: "string_data", onnx.TensorProto.BOOL: "int32_data",
    onnx.TensorProto.UINT8: "int32_data", onnx.TensorProto.INT8: "int32_data",
}


def check_initializers(scopes: list[GraphScope], shown: str) -> list[onnx.TensorProto]:
    """Refuse tensors (initializers, sparse parts, Constant values) that cannot exist: a negative dim,
    or data of the wrong size; return the external ones, for ``check_external_data``.

    Such a tensor makes every derived shape meaningless and ONNX Runtime refuses
    the model. Only lengths are compared; external data is checked by ``os.stat``.
    """
    external: list[onnx.TensorProto] = []
    external_location = onnx.TensorProto.EXTERNAL
    for kind, tensor in iter_tensors(scopes):
        dims = tensor.dims
        count = 1
        if dims:
            if min(dims) < 0:
                raise ModelLoadError(shown, f"{kind} '{tensor.name}' has a negative dim {list(dims)}")
            count = math.prod(dims)
        if tensor.data_location == external_location:
            external.append(tensor)
            continue
        if tensor.HasField("raw_data"):  # the common case, inline: 100k weights pay this loop
            needed = _raw_size_cached(tensor.data_type, count)
            held = len(tensor.raw_data)  # a transient copy of one tensor at most
            if needed is not None and held != needed and not tensor.HasField("segment"):
                raise ModelLoadError(shown, f"{kind} '{tensor.name}' holds {held} bytes of data but dims "
                                     f"{list(dims)} need {needed}")
            continue
        if tensor.HasField("segment"):
            continue
        problem = _data_size_problem(tensor, count)
        if problem:
            raise ModelLoadError(shown, f"{kind} '{tensor.name}' {problem}")
    return external


def _raw_size_cached(data_type: int, count: int) -> int | None:
    """``raw_size`` with the element size looked up once per type."""
    itemsize = _ITEMSIZES.get(data_type)
    if itemsize is None:
        return raw_size(data_type, count)
    return count * itemsize


def _data_size_problem(tensor: onnx.TensorProto, count: int) -> str | None:
    """Typed-field storage (``float_data`` …): one value per element."""
    dims = list(tensor.dims)
    field_name = _TYPED_FIELDS.get(tensor.data_type)
    if field_name is None:
        return None
    held = len(getattr(tensor, field_name))
    if held != count:
        return f"holds {held} values but dims {dims} need {count}"
    return None


def check_names(model: onnx.ModelProto, scopes: list[GraphScope], shown: str) -> None:
    """Refuse names that are not valid UTF-8 and graphs that define a name twice.

    Protobuf hands a string field with invalid UTF-8 to Python as ``bytes``;
    every lookup by name would then miss. ONNX requires single assignment: with
    two definitions every analysis would have to guess which one a reader sees,
    and ONNX Runtime refuses the model. An initializer that is also a graph
    input (IR < 4 style) is a default value, not a second definition.
    """
    _check_text(shown, "the model's header", [model.producer_name, model.producer_version, model.domain]
                + [o.domain for o in model.opset_import] + [p.key for p in model.metadata_props])
    for scope in scopes:
        graph = scope.graph
        inputs = [v.name for v in graph.input]
        inits = [t.name for t in graph.initializer]
        # The node names come from the scope's one pass. Node inputs are not read: a valid one is
        # one of the names checked here, and an invalid one is never looked up.
        scan = scope.scan()
        outputs = scan.outputs
        _check_text(shown, scope.path, inputs, inits, outputs, scan.texts, [v.name for v in graph.output],
                    [v.name for v in graph.value_info])
        if "" in outputs:  # an omitted optional output defines nothing
            outputs = [o for o in outputs if o]
        if scope.owner_node is not None:  # the attribute names that make up this scope's path
            names = [a.name for a in scope.owner_node.attribute]
            _check_text(shown, scope.path, names)
            odd = next((n for n in names if not n or any(c in n for c in "/[]")), None)
            if odd is not None:
                raise ModelLoadError(shown, f"{scope.path}: a graph attribute is named '{odd}'; "
                                     "names with '/', '[' or ']' (or none) cannot be addressed")
        produced = set(outputs)
        if (len(produced) == len(outputs) and len(set(inputs)) == len(inputs) and len(set(inits)) == len(inits)
                and produced.isdisjoint(inputs) and produced.isdisjoint(inits)):
            continue
        kinds: dict[str, str] = {}
        for kind, names in (("a graph input", inputs), ("an initializer", inits)):
            for name in names:
                if kinds.get(name) == kind:
                    raise ModelLoadError(shown, f"{scope.path} defines '{name}' twice as {kind}")
                kinds.setdefault(name, kind)
        for node in graph.node:
            for out in node.output:
                if out and out in kinds:
                    raise ModelLoadError(
                        shown, f"{scope.path} defines tensor '{out}' twice: as {kinds[out]} and as an "
                        f"output of node '{node.name or node.op_type}' (ONNX requires each name once)")
                if out:
                    kinds[out] = f"an output of node '{node.name or node.op_type}'"


def _check_text(shown: str, where: str, *groups: list) -> None:
    """All of ``groups`` are ``str``; else name the first that protobuf gave back as bytes."""
    for group in groups:
        if bytes in set(map(type, group)):
            bad = next(v for v in group if isinstance(v, bytes))
            raise ModelLoadError(shown, f"{where} has a name that is not valid UTF-8: {bad!r}")


def check_cycles(scopes: list[GraphScope], shown: str) -> None:
    """A dependency cycle makes every analysis meaningless; refuse such a model."""
    for scope in scopes:
        cycle = cyclic_nodes(scope.graph)
        if cycle:
            names = ", ".join(
                f"'{scope.graph.node[i].name or scope.graph.node[i].op_type}'" for i in cycle[:5])
            raise ModelLoadError(shown, f"{scope.path} has a dependency cycle through nodes {names}")


def iter_tensors(scopes: list[GraphScope]) -> Iterator[tuple[str, onnx.TensorProto]]:
    """Every tensor that can carry data, with what messages call it: initializers, then the
    parts of sparse initializers and the tensors of Constant-like nodes ("constant tensor")."""
    for scope in scopes:
        for tensor in scope.graph.initializer:
            yield "initializer", tensor
        for sparse in scope.graph.sparse_initializer:
            yield "constant tensor", sparse.values
            yield "constant tensor", sparse.indices
        for index in scope.special():
            for attr in scope.graph.node[index].attribute:
                if attr.type == onnx.AttributeProto.TENSOR:
                    yield "constant tensor", attr.t
                elif attr.type == onnx.AttributeProto.TENSORS:
                    for tensor in attr.tensors:
                        yield "constant tensor", tensor


# Types whose elements pack into less than a byte: raw data holds ceil(count * bits / 8) bytes.
_SUB_BYTE_BITS = {getattr(onnx.TensorProto, name): bits
                  for name, bits in (("INT4", 4), ("UINT4", 4), ("FLOAT4E2M1", 4), ("INT2", 2), ("UINT2", 2))
                  if hasattr(onnx.TensorProto, name)}


# Whole-byte element sizes by type, for the loop over every tensor.
_ITEMSIZES: dict[int, int] = {}
for _type in onnx.TensorProto.DataType.values():
    if _type in _SUB_BYTE_BITS or _type in (onnx.TensorProto.STRING, onnx.TensorProto.UNDEFINED):
        continue
    try:
        _ITEMSIZES[_type] = onnx.helper.tensor_dtype_to_np_dtype(_type).itemsize
    except (KeyError, ValueError, TypeError):
        pass


def raw_size(data_type: int, count: int) -> int | None:
    """Bytes that ``count`` elements of ``data_type`` take as raw data; None if not fixed (strings)."""
    bits = _SUB_BYTE_BITS.get(data_type)
    if bits is not None:
        return (count * bits + 7) // 8
    if data_type == onnx.TensorProto.STRING:
        return None
    try:
        return count * onnx.helper.tensor_dtype_to_np_dtype(data_type).itemsize
    except (KeyError, ValueError, TypeError):
        return None


@dataclass
class _ExternalUse:
    """One external data file as the tensors see it: the first tensor naming it and the furthest byte any needs."""

    first: str
    needed: int = 0
    needing: onnx.TensorProto | None = None  # the tensor itself: reading its name costs, per tensor
    start: int = 0


def check_external_data(tensors: list[onnx.TensorProto], path: Path) -> list[str]:
    """Refuse external references that escape the model folder, are missing or too short.

    Only ``os.stat`` is used: no byte of any weights file is read. A large export
    has tens of thousands of tensors in one ``.data`` file, so each distinct
    location is checked and stat-ed once, and per tensor there is only arithmetic.
    """
    shown = str(path)
    uses: dict[str, _ExternalUse] = {}
    for tensor in tensors:
        location = offset_text = length_text = ""
        for entry in tensor.external_data:  # a loop, not a dict: this runs once per tensor
            key = entry.key
            if key == "location":
                location = entry.value
            elif key == "offset":
                offset_text = entry.value
            elif key == "length":
                length_text = entry.value
        use = uses.get(location)
        if use is None:
            _check_location(shown, f"tensor '{tensor.name}'", location)
            use = uses[location] = _ExternalUse(tensor.name)
        try:
            offset = int(offset_text) if offset_text else 0
            length = int(length_text) if length_text else None
        except ValueError:
            raise ModelLoadError(shown, f"tensor '{tensor.name}': external data offset/length are not integers"
                                 ) from None
        if offset < 0 or (length is not None and length < 0):
            raise ModelLoadError(shown, f"tensor '{tensor.name}': negative external data offset or length")
        if length is None:
            length = raw_size(tensor.data_type, math.prod(tensor.dims))
        needed = offset + (length or 0)
        if needed > use.needed:
            use.needed, use.needing, use.start = needed, tensor, offset
    if uses:
        folder = path.resolve().parent
        for location, use in uses.items():
            _check_file(shown, folder, location, use)
    return list(uses)


def _check_location(shown: str, where: str, location: str) -> None:
    """Refuse a location string that names no file or points outside the model folder by its text."""
    if not location:
        raise ModelLoadError(shown, f"{where} uses external data but names no file")
    if "\0" in location:
        raise ModelLoadError(shown, f"refusing {where}: external data location contains a NUL byte")
    if os.path.isabs(location) or location.startswith(("/", "\\")) or (len(location) > 1 and location[1] == ":"):
        raise ModelLoadError(
            shown, f"refusing {where}: external data location '{location}' is an absolute path"
        )
    if ".." in Path(location.replace("\\", "/")).parts:
        raise ModelLoadError(
            shown, f"refusing {where}: external data location '{location}' escapes the model folder"
        )


def _check_file(shown: str, folder: Path, location: str, use: _ExternalUse) -> None:
    """Resolve and stat one external data file: inside the folder, a regular file, long enough."""
    where = f"tensor '{use.first}'"
    resolved = (folder / location).resolve()
    if resolved != folder and folder not in resolved.parents:
        raise ModelLoadError(
            shown,
            f"refusing {where}: external data location '{location}' resolves outside the "
            "model folder (symbolic link)",
        )
    try:
        found = resolved.stat()
    except OSError:
        raise ModelLoadError(shown, f"{where}: external data file '{location}' is missing") from None
    if not stat.S_ISREG(found.st_mode):
        raise ModelLoadError(shown, f"{where}: external data location '{location}' is not a file")
    if found.st_size < use.needed:
        raise ModelLoadError(
            shown,
            f"tensor '{use.needing.name if use.needing else use.first}': external data file '{location}' has "
            f"{found.st_size} bytes but the "
            f"tensor needs bytes {use.start}..{use.needed}",
        )


class StagedWrite:
    """A replacement for ``target`` written next to it, renamed over it only on commit.

    The temporary file lives in the same folder (so the rename is atomic and
    external data resolves the same way) and is removed on any failure.
    ``expected``: the identity ``target`` had when it was read; the commit refuses if it
    changed since (another program's write is never lost). ``new_file``: ``target`` must not
    exist; the commit links the temporary file into place, which fails if something is there.
    """

    def __init__(self, target: Path, data: bytes, *, expected: FileIdentity | None = None,
                 new_file: bool = False) -> None:
        self.target = target
        self.data = data
        self.expected = expected
        self.new_file = new_file
        self.temp: Path | None = None

    def __enter__(self) -> Path:
        try:
            mode = self.target.stat().st_mode & 0o7777
        except OSError:
            mode = 0o644
        try:
            fd, name = tempfile.mkstemp(prefix=f".{self.target.name}.", suffix=".onnx-lint.tmp",
                                        dir=self.target.parent)
        except OSError as exc:
            raise FixError(f"{self.target}: could not create a temporary file: {exc.strerror or exc}") from None
        self.temp = Path(name)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(self.data)
                handle.flush()
                os.fsync(handle.fileno())
            os.chmod(self.temp, mode)
        except OSError as exc:
            self._discard()
            raise FixError(f"{self.target}: could not write the fixed model: {exc.strerror or exc}") from None
        except BaseException:  # Ctrl-C mid-write: __exit__ will not run for a failed __enter__
            self._discard()
            raise
        return self.temp

    def commit(self) -> None:
        assert self.temp is not None
        if self.new_file:
            self._link_new()
            return
        if self.expected is not None and FileIdentity.now(self.target) != self.expected:
            raise FixError(f"{self.target}: the file changed on disk after it was read (another program replaced "
                           "or edited it); nothing was written - check it again")
        try:
            os.replace(self.temp, self.target)
        except OSError as exc:
            raise FixError(f"{self.target}: could not replace the file: {exc.strerror or exc}") from None
        self.temp = None

    def _link_new(self) -> None:
        """Put the temporary file in place only where nothing is: ``link`` refuses an existing name."""
        assert self.temp is not None
        try:
            os.link(self.temp, self.target)
        except FileExistsError:
            raise FixError(f"{self.target}: the file already exists; nothing was written "
                           "(--force replaces it)") from None
        except OSError as exc:
            if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV, errno.EMLINK):
                raise FixError(f"{self.target}: could not write the file: {exc.strerror or exc}") from None
            # a file system without hard links: the check and the rename are then two steps
            if os.path.lexists(self.target):
                raise FixError(f"{self.target}: the file already exists; nothing was written "
                               "(--force replaces it)") from None
            try:
                os.replace(self.temp, self.target)
            except OSError as exc:
                raise FixError(f"{self.target}: could not write the file: {exc.strerror or exc}") from None
            self.temp = None
            return
        self._discard()

    def _discard(self) -> None:
        if self.temp is not None:
            try:
                self.temp.unlink()
            except OSError:
                pass
            self.temp = None

    def __exit__(self, *exc_info: object) -> None:
        self._discard()


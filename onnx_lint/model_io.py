"""Reading models safely and writing them atomically.

Linting never needs weight bytes: models are parsed without external data, and
external references are validated with ``os.stat`` only, so nothing outside the
model's folder is ever opened (SPEC 2.1, 9).
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import onnx
from google.protobuf.message import DecodeError

from onnx_lint.errors import FixError, ModelLoadError
from onnx_lint.graphs import GraphScope, cyclic_nodes, iter_scopes

# Protobuf refuses messages above 2 GiB; a bigger file cannot hold a model in one message.
MAX_PROTO_BYTES = 2**31 - 1


@dataclass
class LoadedModel:
    """A model parsed from disk together with the exact bytes it came from."""

    path: Path
    data: bytes
    model: onnx.ModelProto
    external_locations: list[str] = field(default_factory=list)

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.data).hexdigest()

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

    def fresh_copy(self) -> onnx.ModelProto:
        """A new, independent parse of the original bytes (cheaper than CopyFrom)."""
        return onnx.ModelProto.FromString(self.data)


def read_model(path: str | os.PathLike[str]) -> LoadedModel:
    """Read and validate a model file; ``ModelLoadError`` names what is wrong."""
    path = Path(path)
    shown = str(path)
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        raise ModelLoadError(shown, "no such file") from None
    except OSError as exc:
        raise ModelLoadError(shown, f"cannot read file: {exc.strerror or exc}") from None
    if path.is_dir():
        raise ModelLoadError(shown, "is a folder, not a model file")
    if size == 0:
        raise ModelLoadError(shown, "empty file (0 bytes), not an ONNX model")
    if size > MAX_PROTO_BYTES:
        raise ModelLoadError(
            shown,
            f"file is {size / 2**30:.1f} GiB; an ONNX protobuf cannot exceed 2 GiB "
            "(store the weights as external data)",
        )
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ModelLoadError(shown, f"cannot read file: {exc.strerror or exc}") from None
    model = parse_model(data, shown)
    loaded = LoadedModel(path, data, model)
    loaded.external_locations = validate_model(model, path, loaded.scopes)
    return loaded


def parse_model(data: bytes, shown: str) -> onnx.ModelProto:
    """Parse bytes as a ModelProto and reject anything that is not really one."""
    try:
        model = onnx.ModelProto.FromString(data)
    except DecodeError:
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
    check_initializer_dims(scopes, shown)
    return check_external_data(scopes, path)


def check_initializer_dims(scopes: list[GraphScope], shown: str) -> None:
    """A tensor with a negative dim cannot exist: nothing about such a model means anything."""
    for scope in scopes:
        for init in scope.graph.initializer:
            if any(d < 0 for d in init.dims):
                raise ModelLoadError(shown, f"initializer '{init.name}' has a negative dim {list(init.dims)}")


def check_cycles(scopes: list[GraphScope], shown: str) -> None:
    """A dependency cycle makes every analysis meaningless; refuse such a model."""
    for scope in scopes:
        cycle = cyclic_nodes(scope.graph)
        if cycle:
            names = ", ".join(
                f"'{scope.graph.node[i].name or scope.graph.node[i].op_type}'" for i in cycle[:5])
            raise ModelLoadError(shown, f"{scope.path} has a dependency cycle through nodes {names}")


def iter_tensors(scopes: list[GraphScope]) -> Iterator[onnx.TensorProto]:
    """Every tensor that can carry external data: initializers and Constant values."""
    for scope in scopes:
        yield from scope.graph.initializer
        for sparse in scope.graph.sparse_initializer:
            yield sparse.values
            yield sparse.indices
        for index in scope.special():
            for attr in scope.graph.node[index].attribute:
                if attr.type == onnx.AttributeProto.TENSOR:
                    yield attr.t
                elif attr.type == onnx.AttributeProto.TENSORS:
                    yield from attr.tensors


def _element_size(data_type: int) -> int | None:
    try:
        np_type = onnx.helper.tensor_dtype_to_np_dtype(data_type)
    except (KeyError, ValueError, TypeError):
        return None
    if data_type in (onnx.TensorProto.STRING,):
        return None
    bits = {onnx.TensorProto.INT4: 4, onnx.TensorProto.UINT4: 4}.get(data_type)
    if bits is not None:
        return None
    return np_type.itemsize


def check_external_data(scopes: list[GraphScope], path: Path) -> list[str]:
    """Refuse external references that escape the model folder, are missing or too short.

    Only ``os.stat`` is used: no byte of any weights file is read.
    """
    shown = str(path)
    folder = path.resolve().parent
    locations: list[str] = []
    for tensor in iter_tensors(scopes):
        if tensor.data_location != onnx.TensorProto.EXTERNAL:
            continue
        info = {entry.key: entry.value for entry in tensor.external_data}
        location = info.get("location", "")
        where = f"tensor '{tensor.name}'"
        if not location:
            raise ModelLoadError(shown, f"{where} uses external data but names no file")
        if os.path.isabs(location) or location.startswith(("/", "\\")) or (len(location) > 1 and location[1] == ":"):
            raise ModelLoadError(
                shown, f"refusing {where}: external data location '{location}' is an absolute path"
            )
        parts = Path(location.replace("\\", "/")).parts
        if ".." in parts:
            raise ModelLoadError(
                shown, f"refusing {where}: external data location '{location}' escapes the model folder"
            )
        target = folder / location
        resolved = target.resolve()
        if folder not in resolved.parents:
            raise ModelLoadError(
                shown,
                f"refusing {where}: external data location '{location}' resolves outside the "
                "model folder (symbolic link)",
            )
        try:
            stat = resolved.stat()
        except OSError:
            raise ModelLoadError(shown, f"{where}: external data file '{location}' is missing") from None
        if not resolved.is_file():
            raise ModelLoadError(shown, f"{where}: external data location '{location}' is not a file")
        try:
            offset = int(info.get("offset", "0") or 0)
            length = int(info["length"]) if info.get("length") else None
        except ValueError:
            raise ModelLoadError(shown, f"{where}: external data offset/length are not integers") from None
        if offset < 0 or (length is not None and length < 0):
            raise ModelLoadError(shown, f"{where}: negative external data offset or length")
        if length is None:
            size = _element_size(tensor.data_type)
            if size is not None:
                count = 1
                for d in tensor.dims:
                    count *= d
                length = count * size
        needed = offset + (length or 0)
        if stat.st_size < needed:
            raise ModelLoadError(
                shown,
                f"{where}: external data file '{location}' has {stat.st_size} bytes but the "
                f"tensor needs bytes {offset}..{needed}",
            )
        if location not in locations:
            locations.append(location)
    return locations


class StagedWrite:
    """A replacement for ``target`` written next to it, renamed over it only on commit.

    The temporary file lives in the same folder (so the rename is atomic and
    external data resolves the same way) and is removed on any failure.
    """

    def __init__(self, target: Path, data: bytes) -> None:
        self.target = target
        self.data = data
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
        return self.temp

    def commit(self) -> None:
        assert self.temp is not None
        try:
            os.replace(self.temp, self.target)
        except OSError as exc:
            raise FixError(f"{self.target}: could not replace the file: {exc.strerror or exc}") from None
        self.temp = None

    def _discard(self) -> None:
        if self.temp is not None:
            try:
                self.temp.unlink()
            except OSError:
                pass
            self.temp = None

    def __exit__(self, *exc_info: object) -> None:
        self._discard()

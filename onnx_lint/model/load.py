"""Reading a model file safely: one open, a wire scan before the bytes, a parse that refuses non-models.

Linting never needs weight bytes: models are parsed without external data, and
external references are validated with ``os.stat`` only, so nothing outside the
model's folder is ever opened (docs/design.md, step 1; docs/security.md).
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import onnx
from google.protobuf.message import DecodeError

from onnx_lint.base.errors import ModelLoadError
from onnx_lint.model.file_checks import stat_model_file, wire_problem
from onnx_lint.model.graphs import GraphScope, iter_scopes, rebind_scopes
from onnx_lint.model.validate import validate_model
from onnx_lint.model.wire import PROTOBUF_DEPTH_LIMIT, subgraph_nesting


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
    display = str(path)
    stat_model_file(path)
    try:
        # O_NONBLOCK: a FIFO swapped in after the stat must not block the open
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except OSError as exc:
        raise ModelLoadError(display, f"cannot read file: {exc.strerror or exc}") from None
    with os.fdopen(fd, "rb") as handle:
        try:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise ModelLoadError(display, "is not a regular file (a FIFO, socket or device); refusing to read it")
            problem = wire_problem(handle, info.st_size)
            if problem is not None:
                raise ModelLoadError(display, f"not a valid ONNX protobuf: {problem}; refused before reading it")
            handle.seek(0)
            data = handle.read()
        except OSError as exc:
            raise ModelLoadError(display, f"cannot read file: {exc.strerror or exc}") from None
    return LoadedModel(path, data, parse_model(data, display), identity=FileIdentity.of(info))


def validate_loaded(loaded: LoadedModel) -> None:
    """The checks every analysis relies on (``validate_model``); ``ModelLoadError`` names what is wrong."""
    loaded.external_locations = validate_model(loaded.model, loaded.path, loaded.scopes)


def parse_model(data: bytes, display: str) -> onnx.ModelProto:
    """Parse bytes as a ModelProto and reject anything that is not really one."""
    try:
        model = onnx.ModelProto.FromString(data)
    except DecodeError:
        depth = subgraph_nesting(data)
        if depth >= PROTOBUF_DEPTH_LIMIT:
            raise ModelLoadError(
                display, f"subgraphs are nested more than {PROTOBUF_DEPTH_LIMIT} protobuf levels deep; "
                "protobuf refuses to parse such a file") from None
        raise ModelLoadError(
            display, "not a valid ONNX protobuf (truncated or corrupt file, or not an ONNX model)"
        ) from None
    except RecursionError:
        raise ModelLoadError(display, "protobuf nesting too deep to parse") from None
    if not model.HasField("graph"):
        raise ModelLoadError(display, "not an ONNX model: the protobuf has no graph")
    if model.ir_version <= 0:
        raise ModelLoadError(display, "not an ONNX model: ir_version is missing")
    return model

"""What the handler modules share: which model a URI names, and the errors requests answer with."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from onnx_lint.server.convert import view_model_path
from onnx_lint.server.output_path import MAX_PATH_CHARS
from onnx_lint.server.session import Session


class OnnxLintServer(LanguageServer):
    """pygls' server with onnx-lint's session; the handlers are added by ``onnx_lint.server.server``."""

    def __init__(self, name: str, version: str, **kwargs: Any) -> None:
        super().__init__(name, version, text_document_sync_kind=lsp.TextDocumentSyncKind.Full, **kwargs)
        self.session = Session(self)


def model_path(uri: str) -> tuple[Path | None, bool]:
    """The model a URI is about, and whether the URI is its textual view."""
    viewed = view_model_path(uri)
    if viewed is not None:
        return Path(viewed), True
    if not uri.startswith("file:"):
        return None, False
    path = to_fs_path(uri)
    if path is None or not path.endswith(".onnx") or "\0" in path or len(path) > MAX_PATH_CHARS:
        return None, False  # a NUL byte (file:///%00/m.onnx) or a path longer than any file system takes
    return Path(path), False


def file_path(uri: str) -> Path | None:
    """The local file a ``file:`` URI names (any file, not only models)."""
    path = to_fs_path(uri) if uri.startswith("file:") else None
    return Path(path) if path and "\0" not in path and len(path) <= MAX_PATH_CHARS else None


def invalid_params(message: str) -> JsonRpcException:
    return JsonRpcException(message, code=lsp.ErrorCodes.InvalidParams)


def request_failed(message: str) -> JsonRpcException:
    return JsonRpcException(message, code=lsp.LSPErrorCodes.RequestFailed)


def request_cancelled(message: str) -> JsonRpcException:
    return JsonRpcException(message, code=lsp.LSPErrorCodes.RequestCancelled)


def range_overlaps(a: lsp.Range, b: lsp.Range) -> bool:
    return (a.start.line, a.start.character) <= (b.end.line, b.end.character) and \
        (b.start.line, b.start.character) <= (a.end.line, a.end.character)

"""The language server's wiring: one pygls server, each group of handlers registered from its module (docs/editors.md).

As in ruff_server, the handlers live in ``onnx_lint.server.api`` (one module
per group of requests and notifications) and share one ``Session`` (client
capabilities resolved once, settings, the settings index, tracked files, the
outcome cache, workers and background tasks). Nothing here, nor anything it
imports, imports onnx: all onnx work runs in worker processes.
"""

from __future__ import annotations

from onnx_lint.base.version import __version__
from onnx_lint.server.api import actions, documents, lifecycle, views, watching
from onnx_lint.server.api.arguments import command_converter
from onnx_lint.server.api.common import OnnxLintServer
from onnx_lint.server.protocol import ServerProtocol, quiet_answered_errors

HANDLER_GROUPS = (lifecycle, documents, watching, actions, views)


def create_server() -> OnnxLintServer:
    """The server with every feature registered, on pygls' protocol as ``protocol.py`` amends it."""
    quiet_answered_errors()
    server = OnnxLintServer("onnx-lint", __version__, protocol_cls=ServerProtocol,
                            converter_factory=command_converter)
    for group in HANDLER_GROUPS:
        group.register(server)
    return server

"""pygls' protocol with what this server needs of it: typed command arguments and a shutdown that always answers.

- ``workspace/executeCommand``: each argument is structured into the type the command's handler
  annotates (``api/arguments.py``), and a malformed call is answered with InvalidParams naming the
  command and the argument.
- ``shutdown``: pygls 2.1 cancels the requests in flight while iterating over the dict that holds
  them; cancelling an ``executeCommand`` runs its callback at once, which removes it from that dict,
  so a shutdown while the model view's requests ran was answered with an internal error
  ("dictionary changed size during iteration", pygls issue #606) and the editor's restart stopped
  there, leaving no server. Here the dict is copied first.
- A request answered with an error on purpose (InvalidParams, RequestFailed, RequestCancelled) is
  the answer, not a server fault: pygls' log of it, with a traceback, is left out.
"""

from __future__ import annotations

import logging
from collections.abc import Generator
from typing import Any

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException
from pygls.protocol import LanguageServerProtocol, lsp_method

from onnx_lint.server.api.arguments import Parameter, command_parameters, structure_arguments
from onnx_lint.server.api.common import invalid_params


class ServerProtocol(LanguageServerProtocol):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._parameters: dict[str, list[Parameter]] = {}

    @lsp_method(lsp.WORKSPACE_EXECUTE_COMMAND)
    def lsp_workspace__execute_command(self, params: lsp.ExecuteCommandParams) -> Generator[Any, Any, Any]:
        handler = self.fm.commands.get(params.command)
        if handler is None:
            raise invalid_params(f"no command {params.command!r}: this server's commands are "
                                 f"{', '.join(sorted(self.fm.commands))}")
        if params.command not in self._parameters:
            self._parameters[params.command] = command_parameters(handler)
        arguments = structure_arguments(params.command, self._parameters[params.command], params.arguments,
                                        self._converter)
        return (yield handler, tuple(arguments), None)

    @lsp_method(lsp.SHUTDOWN)
    def lsp_shutdown(self, *args: Any) -> Generator[Any, Any, None]:
        if (user_handler := self.fm.features.get(lsp.SHUTDOWN)) is not None:
            yield user_handler, args, None
        current = self.msg_id  # the shutdown request itself is answered, not cancelled
        for msg_id, future in list(self._request_futures.items()):
            if msg_id != current and not future.done():
                future.cancel()
        self._shutdown = True
        return None


# What a handler raises to answer a request with an error on purpose.
ANSWERS = {lsp.ErrorCodes.InvalidParams, lsp.LSPErrorCodes.RequestFailed, lsp.LSPErrorCodes.RequestCancelled}


class AnsweredErrors(logging.Filter):
    """Drops pygls' log of a request answered with one of ``ANSWERS`` (it logs each with a traceback)."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        return not (isinstance(error, JsonRpcException) and error.code in ANSWERS)


def quiet_answered_errors() -> None:
    logger = logging.getLogger("pygls.protocol.json_rpc")
    if not any(isinstance(f, AnsweredErrors) for f in logger.filters):
        logger.addFilter(AnsweredErrors())

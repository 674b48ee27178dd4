"""Keep ONNX Runtime's quantization tools off the caller's terminal, without changing the process for anyone else.

ORT's histogram calibrators ``print`` their progress and its quantizer logs warnings through the root
logger. ``contextlib.redirect_stdout`` and a root logger level are process-wide: with two quantize runs
in two threads of one process (an application, the language server's worker) they leave the caller's
``sys.stdout`` a ``StringIO`` and the root level changed. Here the first quiet section of the process
puts a forwarding stream in front of ``sys.stdout`` and a filter on the root logger and its handlers
(with a stand-in handler where the root had none, so that ``logging.warning`` does not ``basicConfig`` one
for good); each drops only what the threads inside a quiet section write; the last section to end takes
them all away again, so the process is left as it was found.
"""

from __future__ import annotations

import contextlib
import io
import logging
import sys
import threading
from collections.abc import Iterator
from typing import Any

_lock = threading.Lock()
_state = threading.local()
_sections = 0
_installed: tuple[Any, list[logging.Handler]] | None = None  # the stdout replaced, the handlers filtered


def _quiet_here() -> bool:
    return bool(getattr(_state, "depth", 0))


class _Forwarding(io.TextIOBase):
    """``sys.stdout`` while a quiet section runs: writes of quiet threads vanish, others go through."""

    def __init__(self, target: Any) -> None:
        self._target = target

    def write(self, text: str) -> int:
        return len(text) if _quiet_here() else self._target.write(text)

    def flush(self) -> None:
        if not _quiet_here():
            self._target.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._target, name)


class _DropQuiet(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno >= logging.ERROR or not _quiet_here()


_DROP = _DropQuiet()


class _LastResort(logging.Handler):
    """The root logger's handler while a quiet section runs, if it had none: ``logging.warning`` would otherwise
    call ``basicConfig`` and leave a handler behind. Records of threads outside a quiet section go where they
    would have gone (``logging.lastResort``)."""

    def emit(self, record: logging.LogRecord) -> None:
        if logging.lastResort is not None and record.levelno >= logging.lastResort.level:
            logging.lastResort.handle(record)


_STAND_IN = _LastResort()
_STAND_IN.addFilter(_DROP)


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """Within the block, this thread's prints and its log records below ERROR are dropped."""
    global _sections, _installed
    with _lock:
        if _sections == 0:
            root = logging.getLogger()
            if not root.handlers:
                root.addHandler(_STAND_IN)
            handlers = [h for h in (*root.handlers, logging.lastResort) if h is not None and h is not _STAND_IN]
            for handler in handlers:
                handler.addFilter(_DROP)
            root.addFilter(_DROP)  # records logged on the root itself, whichever handler comes to hold them
            _installed = (sys.stdout, handlers)
            sys.stdout = _Forwarding(sys.stdout)
        _sections += 1
    _state.depth = getattr(_state, "depth", 0) + 1
    try:
        yield
    finally:
        _state.depth -= 1
        with _lock:
            _sections -= 1
            if _sections == 0 and _installed is not None:
                stdout, handlers = _installed
                if isinstance(sys.stdout, _Forwarding):  # the caller may have set its own meanwhile
                    sys.stdout = stdout
                for handler in handlers:
                    handler.removeFilter(_DROP)
                root = logging.getLogger()
                root.removeFilter(_DROP)
                root.removeHandler(_STAND_IN)
                _installed = None

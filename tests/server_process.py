"""One `onnx-lint server` process driven over stdio by pytest-lsp's client, with its whole stderr kept.

pytest-lsp forwards a server's stderr line by line as it comes; these tests look for tracebacks in
all of it, so the lines are kept here (and still forwarded) until the process has ended.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path
from typing import Any

from lsp_support import WAIT_S
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient
from pytest_lsp.client import make_test_lsp_client


class ServerProcess:
    def __init__(self) -> None:
        self.client: LanguageClient = make_test_lsp_client()
        self.stderr: list[str] = []
        self.initialized: lsp.InitializeResult | None = None
        self._reader: asyncio.Task[None] | None = None

    @classmethod
    async def start(cls, root: Path, capabilities: lsp.ClientCapabilities, options: Any = None) -> ServerProcess:
        self = cls()

        @self.client.feature(lsp.CLIENT_REGISTER_CAPABILITY)
        def register(params: lsp.RegistrationParams) -> None:
            """Accepted, as VS Code accepts the server's file watchers."""

        await self.client.start_io(sys.executable, "-m", "onnx_lint", "server")
        forwarder = self.client._stderr_forwarder  # replaced by ours, which also keeps the lines
        if forwarder is not None:
            forwarder.cancel()
        self._reader = asyncio.ensure_future(self._read())
        self.initialized = await asyncio.wait_for(self.client.initialize_session(lsp.InitializeParams(
            capabilities=capabilities, root_uri=root.as_uri(), initialization_options=options,
            workspace_folders=[lsp.WorkspaceFolder(uri=root.as_uri(), name=root.name)])), WAIT_S)
        return self

    async def _read(self) -> None:
        stream = self.process.stderr
        assert stream is not None
        while line := await stream.readline():
            sys.stderr.buffer.write(line)
            self.stderr.append(line.decode(errors="replace"))

    @property
    def process(self) -> asyncio.subprocess.Process:
        assert self.client._server is not None
        return self.client._server

    @property
    def pid(self) -> int:
        return self.process.pid

    def workers(self) -> set[int]:
        """The server's live worker processes (multiprocessing's resource tracker is a child too, not a worker)."""
        found = set()
        for pid in self.children():
            try:
                command = Path(f"/proc/{pid}/cmdline").read_bytes()
            except OSError:
                continue
            if b"resource_tracker" not in command:
                found.add(pid)
        return found

    def children(self) -> set[int]:
        """The server's live child processes, from every thread that may have started one."""
        found: set[int] = set()
        try:
            tasks = os.listdir(f"/proc/{self.pid}/task")
        except OSError:
            return found
        for task in tasks:
            try:
                found.update(int(pid) for pid in Path(f"/proc/{self.pid}/task/{task}/children").read_text().split())
            except OSError:
                continue
        return {pid for pid in found if running(pid)}

    async def shutdown(self, timeout: float = WAIT_S) -> float:
        """``shutdown`` as an editor sends it; the seconds until the server answered."""
        started = time.monotonic()
        await asyncio.wait_for(self.client.shutdown_async(None), timeout)
        return time.monotonic() - started

    async def exit(self, timeout: float = WAIT_S) -> int:
        """``exit``; the process's exit status once it has ended (its stderr read to the end)."""
        self.client.exit(None)
        code = await asyncio.wait_for(self.process.wait(), timeout)
        if self._reader is not None:
            await asyncio.wait_for(self._reader, timeout)
        await self.client.stop()
        return code

    async def kill(self) -> None:
        """For a test that failed midway: no server is left behind."""
        if self.client._server is not None and self.process.returncode is None:
            self.process.kill()
            await self.process.wait()
        await self.client.stop()

    def tracebacks(self) -> list[str]:
        """Lines of its log that show a Python traceback or an exception pygls logged."""
        return [line for line in self.stderr if "Traceback" in line or "Exception occurred" in line
                or "Failed to handle" in line or "exception was never retrieved" in line]


def running(pid: int) -> bool:
    """Whether a process exists and is not a zombie."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return False
    return fields[0] != "Z"

"""Writing a model atomically: a temporary file beside the target, renamed over it only on commit."""

from __future__ import annotations

import errno
import os
import re
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path

from onnx_lint.base.errors import FixError
from onnx_lint.model.load import FileIdentity

_TEMP_SUFFIX = ".onnx-lint.tmp"


class StagedWrite:
    """A replacement for ``target`` written next to it, renamed over it only on commit.

    The temporary file lives in the same folder (so the rename is atomic and
    external data resolves the same way) and is removed on any failure. Its name,
    ``.NAME.PID.XXXXXXXX.onnx-lint.tmp``, carries the writer's process id: a write
    killed before it could clean up (SIGKILL, a crash of the machine) leaves one
    behind, and the next write of the same file removes it (``sweep_leftovers``).
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
        sweep_leftovers(self.target)
        try:
            fd, name = tempfile.mkstemp(prefix=f".{self.target.name}.{os.getpid()}.", suffix=_TEMP_SUFFIX,
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


def sweep_leftovers(target: Path) -> None:
    """Remove the temporary files that earlier writes of ``target`` left when their process was killed.

    Only a regular file of this user whose name is such a file's, with the process id of a
    process that no longer runs, is removed: a concurrent write's file stays (its writer is
    alive), and so does one whose id a new process took (that writer cannot be told apart from a
    live one). POSIX only: elsewhere the files stay, as before.
    """
    pattern = re.compile(rf"\.{re.escape(target.name)}\.(\d+)\.[a-z0-9_]+{re.escape(_TEMP_SUFFIX)}\Z")
    for path in orphans(target.parent, pattern, stat.S_ISREG):
        try:
            os.unlink(path)
        except OSError:  # gone already
            pass


def orphans(folder: Path, pattern: re.Pattern[str], kind: Callable[[int], bool]) -> list[str]:
    """The entries of ``folder`` a killed writer left: the name matches ``pattern`` (group 1: the writer's process
    id), no process with that id runs, the entry is this user's and of ``kind`` (``stat.S_ISREG``, ``S_ISDIR``);
    links are not followed. POSIX only: elsewhere none."""
    if os.name != "posix":
        return []
    found: list[str] = []
    try:
        entries = os.scandir(folder)
    except OSError:
        return found
    with entries:
        for entry in entries:
            match = pattern.match(entry.name)
            if match is None or _running(int(match.group(1))):
                continue
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:  # gone already
                continue
            if kind(info.st_mode) and info.st_uid == os.getuid():
                found.append(entry.path)
    return found


def _running(pid: int) -> bool:
    """Whether a process with this id exists (one of another user's counts: it may be writing)."""
    if pid <= 0 or pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # EPERM: it exists, and is not ours
        return True
    return True

"""Where the server may write a quantized model: inside the model's workspace folder, nowhere else.

The output path comes from the command's arguments or from the client's settings,
which a workspace can carry; either way it is a request from outside the user's
hands. It must resolve (symbolic links followed, ``..`` applied) inside the
workspace folder that holds the model (the model's own folder when it is in
none), so neither a relative ``../x`` nor an absolute path nor a symlinked parent
folder can make the server write or create folders elsewhere.
"""

from __future__ import annotations

import os
from pathlib import Path

# The longest path the server accepts anywhere (PATH_MAX on Linux): resolving a path costs time in its number
# of parts, so it is bounded before anything resolves it.
MAX_PATH_CHARS = 4096


class OutputRefused(ValueError):
    """The requested output is outside the allowed folder, or is the model itself."""


def quantize_output(model: Path, requested: str | None, workspace: Path | None) -> Path:
    """The checked output path for quantizing ``model``; ``OutputRefused`` says why one is not allowed."""
    if requested is not None and not isinstance(requested, str):
        raise OutputRefused("the quantize output must be a path (a string)")
    if requested is not None and "\0" in requested:
        raise OutputRefused("the quantize output contains a NUL byte")
    if requested is not None and len(requested) > MAX_PATH_CHARS:  # before any resolution: its cost grows with it
        raise OutputRefused(f"the quantize output is {len(requested)} characters long; a path has at most "
                            f"{MAX_PATH_CHARS}")
    output = Path(requested) if requested else model.with_name(f"{model.stem}.int8-fp16.onnx")
    if not output.is_absolute():
        output = model.parent / output
    boundary = workspace if workspace is not None else model.parent
    try:
        allowed = Path(os.path.realpath(boundary))
        resolved = Path(os.path.realpath(output))
    except (OSError, ValueError) as exc:
        raise OutputRefused(f"the quantize output {output} cannot be resolved: {exc}") from None
    if resolved == allowed or not resolved.is_relative_to(allowed):
        raise OutputRefused(f"the quantize output {output} resolves to {resolved}, outside the workspace folder "
                            f"{allowed}; the server writes only inside it")
    if resolved == Path(os.path.realpath(model)):
        raise OutputRefused("the output must be a new file; the model itself is never changed")
    return resolved

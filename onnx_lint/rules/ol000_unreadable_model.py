"""## unreadable-model (OL000)

### What it does
Reports a file that cannot be read or analysed as an ONNX model: an empty
file, random bytes, a truncated or corrupt protobuf, another kind of protobuf
message, a graph with a cycle, external data that is missing, too short, or
whose location escapes the model's folder (`../../etc/passwd`, an absolute
path, a symbolic link pointing out), an IR version or opset newer than the
installed onnx supports, or a negative `dim_value`.

### Why does this matter?
Every downstream tool fails on such a file, usually with a traceback that
names neither the file nor the problem. A location that escapes the model
folder is also a way to make a tool read files it should not: onnx-lint
refuses it before reading anything.

### Example
```
$ onnx-lint check truncated.onnx
truncated.onnx: OL000 not a valid ONNX protobuf (truncated or corrupt file, or not an ONNX model)
```

### Fix safety
There is no automatic fix. The exit code is 2 and the file is never written.
"""

from __future__ import annotations

from collections.abc import Iterable

from onnx_lint.lint.context import LintContext
from onnx_lint.lint.diagnostics import Diagnostic, Severity
from onnx_lint.lint.file_result import UNREADABLE
from onnx_lint.lint.rule_api import Rule


class UnreadableModel(Rule):
    code, name = UNREADABLE
    severity = Severity.ERROR
    summary = "The file cannot be read or analysed as an ONNX model"

    def check(self, ctx: LintContext) -> Iterable[Diagnostic]:
        # Emitted by the linter itself when loading fails: a readable model has no OL000.
        return ()

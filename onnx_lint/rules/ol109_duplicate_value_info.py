"""## duplicate-value-info (OL109)

### What it does
Flags a tensor declared more than once in one graph's `value_info` (onnxslim
writes such copies, for instance on PP-OCRv3's detection model).

### Why does this matter?
Tools disagree on which copy counts: ONNX Runtime merges them in order and
keeps the last (`Error merging shape info for output. 'h' ... Falling back to
lenient merge`), ONNX's inference keeps both, and a fix that corrects one copy
leaves the other as it was. When the copies disagree, this is a warning; exact
copies are an info note.

### Example
```
value_info h: float[batch,4]
value_info h: float[-1,5]
```
keeps `h: float[batch,4]` after `--fix`.

### Fix safety
Safe: one copy stays byte-for-byte as it was (the first that matches what the
graph computes, else the first), the other copies are removed; no node,
attribute or initializer changes. Other rules then judge the copy that stays.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from onnx_lint.lint.context import LintContext
from onnx_lint.lint.diagnostics import Diagnostic, FixAvailability, Location, Severity
from onnx_lint.lint.rule_api import Rule
from onnx_lint.model.edits import DropDuplicateValueInfo, Edit


class DuplicateValueInfo(Rule):
    code = "OL109"
    name = "duplicate-value-info"
    severity = Severity.WARNING
    fix_availability = FixAvailability.ALWAYS
    summary = "A tensor is declared more than once in one graph's value_info"

    def fix_title(self, edits: Sequence[Edit]) -> str:
        [edit] = edits
        assert isinstance(edit, DropDuplicateValueInfo)
        return f"Keep one value_info entry for '{edit.tensor}' (copy {edit.keep + 1}) and remove the others"

    def check(self, ctx: LintContext) -> Iterable[Diagnostic]:
        for found in ctx.duplicate_value_info:
            places = ", ".join(f"value_info[{i}]" for i in found.indexes)
            if found.identical:
                why = "the copies are identical"
            else:
                why = f"the copies differ; value_info[{found.keep}] is kept"
                why += " (it matches what the graph computes)" if found.matches else " (the first)"
            first_dropped = next(i for i in found.indexes if i != found.keep)
            yield self.report(
                ctx,
                f"value_info declares '{found.name}' {len(found.indexes)} times ({places}): {why}",
                Location.at_entry(found.graph, "value_info", first_dropped, tensor=found.name),
                edits=[DropDuplicateValueInfo(found.graph, found.name, found.ordinal)],
                severity=Severity.INFO if found.identical else None,
            )

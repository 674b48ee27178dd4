"""## dim-param-mismatch (DimParamMismatch, OL002)

### What it does
At equal rank, flags a graph output whose declared dim contradicts the dim the
graph computes:
- two different concrete values (`[batch,5]` declared, `[batch,4]` computed);
- a concrete value where the graph computes the dim from a dynamic input dim
  (the output pins `1` while the input's `batch` is free). Where inference
  only finds an anonymous dim, onnx-lint infers again with the dynamic input
  dims pinned to two different sizes: a dim that follows them depends on the
  input;
- one `dim_param` name used for dims the graph proves different;
- a declared name that is a graph input's dim name, where the graph computes
  another size: `seq` declared where the graph computes `2*seq` (a concat
  along the sequence, a 2x upsample), two names swapped, or the name of the
  wrong input dim. Symbolic names are claims too: onnx-lint infers once more
  with each dynamic input dim pinned to a size of its own (distinct primes)
  and compares. This runs only where plain inference did not already confirm
  the name, and one run serves every name of the model. A name that reads as
  arithmetic of input dim names (`past_sequence_length + sequence_length`,
  `2*seq`, `floor(h/2 - 1/2) + 1`, `(w + 1)//2`) is a claim about that
  expression: it is evaluated under the same sizes;
- for outputs only a run of the model can shape (the runtime probe, e.g.
  `ai.onnx.ml` operators): a concrete dim, or an input's dim name, that
  ONNX Runtime's results contradict in two runs at different input sizes.

A renamed symbolic dim (`my_batch` declared, `batch` or `unk__0` computed) is
*not* a mismatch: a name that no graph input carries, and that is no
expression of input dim names, claims nothing. Nor is a
concrete declared dim where the computed dim is anonymous and not shown to
depend on a dynamic input, nor a declared 1 downstream of a Reshape whose
computed target bakes batch 1 in (OL108 reports that Reshape; only batch 1
runs, so the 1 is what ONNX Runtime returns).

### Why does this matter?
`Inferred shape and existing shape differ in dimension 1: (4) vs (5)` in
strict inference and the full checker; a pinned batch of `1` makes ONNX
Runtime warn at run time and TensorRT build a batch-1 engine.

### Example
```
Y = Relu(X[batch,4])
graph output Y: float[1,4]      # batch pinned to 1
```
becomes `Y: float[batch,4]` after `--fix`.
```
Y = Concat(X[batch,seq], X, axis=1)
graph output Y: float[batch,seq]   # declared 'seq' (= 41 when 'seq' is 41) but the graph computes 82
```
becomes `Y: float[batch,2*seq]` after `--fix`.

### Fix safety
Safe: only the conflicting dims of the declaration change; other dims stay as
declared (including names and expressions the proof confirmed). A refuted name
becomes the input dim name the graph really follows (swapped names), else the
integer affine expression of input dim names that two pinned runs fit and a
third confirms (`2*seq`, `seq - 1`, `past_sequence_length + sequence_length`),
else a fresh name that says where it comes from (`Y_dim1`, dim 1 of `Y`) and
claims nothing; a fix never turns a provable `batch` into an unknown dim.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from onnx_lint.lint.context import LintContext
from onnx_lint.lint.diagnostics import Diagnostic, FixAvailability, Severity
from onnx_lint.lint.rule_api import Rule, computed_dims_title
from onnx_lint.model.edits import Edit
from onnx_lint.model.shapes import format_dims
from onnx_lint.rules.helpers import describe_conflict, unproven_clause


class DimParamMismatch(Rule):
    code = "OL002"
    name = "dim-param-mismatch"
    severity = Severity.ERROR
    fix_availability = FixAvailability.ALWAYS
    summary = "A declared output dim conflicts with the dim the graph computes"

    def fix_title(self, edits: Sequence[Edit]) -> str:
        return computed_dims_title(edits, "dims")

    def check(self, ctx: LintContext) -> Iterable[Diagnostic]:
        for decl in ctx.declarations:
            if decl.kind != "output" or decl.rank_mismatch or not decl.conflicts:
                continue
            clauses = "; ".join(describe_conflict(c) for c in decl.conflicts)
            clauses += unproven_clause(ctx, decl)
            yield self.report(
                ctx,
                f"graph output '{decl.name}' is declared {format_dims(decl.declared_info.dims)}: {clauses}",
                decl.location,
                engine=decl.engine,
                edits=[ctx.reconcile_edit(decl)],
            )

"""## underivable-output-shape (OL007)

### What it does
Notes a graph output whose shape no engine could derive: neither ONNX's own
inference nor, for the main graph, ONNX Runtime's symbolic shape inference
nor a run of the model in ONNX Runtime on synthetic inputs (the runtime probe;
it is not possible for models with string inputs, external data, more than
20,000 nodes or more bytes than its memory cap holds, or without onnxruntime;
`--no-runtime-probe` and an untrusted editor workspace turn it off).
Its declaration could therefore not be checked; the note says why each engine
gave up. It also notes an output whose dims depend on which branch of an If
runs: no one declaration is true of both branches, so those dims stay as
declared, unverified. Every model whose main graph has an If steered by a
graph input (optimum's merged decoders and their `use_cache_branch`) is run
on both branches for this, since the static engines merge the two branches
into one shape: a merged seq2seq decoder's `present.*.encoder.*` outputs,
declared `[batch_size, heads, encoder_sequence_length, head_dim]`, are empty
placeholders `(0, heads, 1, head_dim)` in the cache branch.

It also notes an output whose shape the *value* of a graph input sets (a
Squeeze whose `axes` is an input, a TopK's `k`, a Resize's `sizes`, a window's
`size`): a declared number there is a contract on the values the model is fed.
ONNX's own inference answers for such an output where it can (it never invents
a value); ONNX Runtime's symbolic engine, which guesses the missing value, and
the runtime probe, which feeds values nobody promised, are not asked. The note
names the input and the declared numbers no engine derived for every value.

The note is information, not a warning: ONNX Runtime runs both branches of
such a model without complaint, and the consumer that picks the branch
(a generation loop) knows which outputs it reads on each; a declaration
cannot say "this size on one branch, that size on the other".

### Why does this matter?
Silence would read as "this output is fine". The note says which engines were
tried and why they gave up, so you know the declaration is unverified rather
than verified. Typical causes: an operator from a custom domain, a
data-dependent shape, or an operator whose inference fails (see OL003).

### Example
```
Y = com.example.MyOp(X)         # no schema anywhere
graph output Y: float[1,8]      # kept as declared, reported as unverified
```

### Fix safety
No fix: the declaration is kept as it is and never guessed.
"""

from __future__ import annotations

from collections.abc import Iterable

from onnx_lint.engines.engine import Engine
from onnx_lint.lint.context import LintContext
from onnx_lint.lint.declarations import Declaration
from onnx_lint.lint.diagnostics import Diagnostic, Severity
from onnx_lint.lint.rule_api import Rule
from onnx_lint.model.graphs import ROOT
from onnx_lint.model.shapes import Dim, format_info


class UnderivableOutputShape(Rule):
    code = "OL007"
    name = "underivable-output-shape"
    severity = Severity.INFO
    summary = "No inference engine can derive this graph output's shape; its declaration is unverified"

    def check(self, ctx: LintContext) -> Iterable[Diagnostic]:
        for decl in ctx.declarations:
            if decl.kind == "output" and decl.graph == ROOT and ctx.oracle.probe_result is not None:
                yield from self._branch_dependent(ctx, decl)
            if decl.kind != "output":
                continue
            if decl.graph == ROOT and _unproven_numbers(decl) and decl.name in ctx.oracle.value_set:
                yield self._value_set(ctx, decl)
                continue
            if not decl.underivable:
                continue
            if (decl.graph, decl.name) in ctx.undefined_outputs:
                continue  # nothing produces it: OL104's error says so, and there is no shape to derive
            if decl.graph != ROOT and (decl.declared is None or decl.declared.dims is None):
                continue  # a subgraph output that declares no shape has nothing left unverified
            if decl.declared is None and self._non_tensor(ctx, decl.name):
                continue  # sequences and maps (ZipMap) have no tensor shape to derive
            tried = ["onnx: no shape"]
            setters = ctx.oracle.value_set.get(decl.name) if decl.graph == ROOT else None
            if setters:
                named = " and ".join(f"'{name}'" for name in sorted(setters))
                tried.append(f"{Engine.ORT_SYMBOLIC} and {Engine.ORT_RUN}: not asked, since its shape is set by the "
                             f"value of input{'s' if len(setters) > 1 else ''} {named}, which they would guess")
            elif decl.graph == ROOT and ctx.oracle.symbolic_ran:
                failure = next((n.message for n in ctx.oracle.notes if n.engine == Engine.ORT_SYMBOLIC), None)
                if failure is not None and "cyclic" in failure:
                    # The model has no cycle (cycles are refused before any rule runs): ONNX Runtime's
                    # engine says so whenever an output or a node input is a tensor nothing defines.
                    failure = "stopped: the graph outputs or reads a tensor nothing defines"
                tried.append(f"{Engine.ORT_SYMBOLIC}: {failure or 'no shape'}")
            elif decl.graph != ROOT:
                tried.append(f"{Engine.ORT_SYMBOLIC}: not run on subgraphs")
                tried.append(f"{Engine.ORT_RUN}: a run returns only the main graph's outputs, not a subgraph's")
            if decl.graph == ROOT and not setters:
                if not ctx.runtime_probe:
                    tried.append(f"{Engine.ORT_RUN}: turned off")
                elif ctx.oracle.probe_result is not None:
                    result = ctx.oracle.probe_result
                    why = result.reason or result.unstable.get(decl.name, "no stable shape")
                    tried.append(f"{Engine.ORT_RUN}: {why}")
            yield self.report(
                ctx,
                f"no inference engine could derive the shape of graph output '{decl.name}' "
                f"({'; '.join(tried)}); its declaration {format_info(decl.declared)} is kept unverified",
                decl.location,
            )

    def _branch_dependent(self, ctx: LintContext, decl: Declaration) -> Iterable[Diagnostic]:
        """An output whose dims depend on which If branch runs: no one declaration is true of both.

        For an output the probe shaped, the note says so whatever is declared; for one a static engine
        shaped (it merges the branches), only where a declared number or input dim name claims a size
        that one branch contradicts (a renamed dim claims nothing).
        """
        result = ctx.oracle.probe_result
        fact = result.facts.get(decl.name) if result is not None else None
        if fact is None or result is None:
            return
        from onnx_lint.engines.probe import branch_note  # imported by the probe that made ``result``

        moving = [i for i, moves in enumerate(fact.branch_dependent) if moves]
        if decl.engine != Engine.ORT_RUN:
            declared = decl.declared.dims if decl.declared is not None else None
            if declared is None or len(declared) != len(fact.branch_dependent):
                return
            moving = [i for i in moving if _claims_a_size(ctx, declared[i])]
        note = branch_note(fact, result.conditions, only=moving)
        if note is None:
            return
        yield self.report(
            ctx,
            f"the shape of graph output '{decl.name}' depends on which If branch runs ({Engine.ORT_RUN}: {note}); "
            f"its declaration {format_info(decl.declared)} is kept for those dims, unverified",
            decl.location,
        )

    def _value_set(self, ctx: LintContext, decl: Declaration) -> Diagnostic:
        """An output whose shape the value of a graph input sets: its declared numbers are a contract on the
        values the model is fed, which no engine can check for every value."""
        inputs = sorted(ctx.oracle.value_set[decl.name])
        named = " and ".join(f"'{name}'" for name in inputs)
        numbers = _unproven_numbers(decl)
        declared = decl.declared_info
        if len(numbers) == len(declared.dims or ()):
            what = f"its declared {format_info(declared)} holds"
        else:
            dims = " and ".join(map(str, numbers))
            what = f"its declared dim{'s' if len(numbers) > 1 else ''} {dims} of {format_info(declared)} " \
                   f"hold{'' if len(numbers) > 1 else 's'}"
        return self.report(
            ctx,
            f"the shape of graph output '{decl.name}' is set by the value of input{'s' if len(inputs) > 1 else ''} "
            f"{named}: {what} only for the values the model is fed, which no engine knows; kept unverified",
            decl.location,
        )

    @staticmethod
    def _non_tensor(ctx: LintContext, name: str) -> bool:
        for value in ctx.model.graph.output:
            if value.name == name:
                which = value.type.WhichOneof("value")
                return which is not None and which not in ("tensor_type", "sparse_tensor_type")
        return False


def _unproven_numbers(decl: Declaration) -> list[int]:
    """Declared numbers no engine derived as numbers: where the derived dim is not concrete, or the whole shape
    is underivable."""
    declared = decl.declared.dims if decl.declared is not None else None
    if not declared:
        return []
    numbers = [i for i, dim in enumerate(declared) if isinstance(dim, int) and dim >= 0]
    if not numbers or decl.underivable or decl.rank_mismatch:
        return numbers
    derived = decl.derived_info.dims or ()
    return [i for i in numbers if not isinstance(derived[i], int)]


def _claims_a_size(ctx: LintContext, dim: Dim) -> bool:
    """A declared number, or an input dim's name or an expression of them; a renamed dim claims nothing."""
    if isinstance(dim, int):
        return dim >= 0
    return isinstance(dim, str) and ctx.claims_size(dim)

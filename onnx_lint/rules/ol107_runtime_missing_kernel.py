"""## runtime-missing-kernel (OL107)

### What it does
Flags a node for which the installed ONNX Runtime has no CPU kernel: no kernel
of its operator covers the operator version the model's opset selects, or none
accepts the node's element types (as ONNX's inference derives them). Read from
ONNX Runtime's own kernel registry (`get_all_opkernel_def`, gathered once per
installed version in a child process and cached); silent when ONNX Runtime is
not installed. Not flagged: an operator with no kernel at its version that
ONNX defines as a function (ONNX Runtime expands the function; it does not
when kernels exist but none takes the node's types, as for Relu on INT16),
FLOAT16 nodes that have a FLOAT kernel (ONNX Runtime inserts Casts around them
on CPU), custom domains ONNX Runtime does not know (a custom-op library may
supply them), and Constant nodes (ONNX Runtime turns them into initializers).
A type inference does not know is not guessed: that constraint counts as met.
On graphs above 20,000 nodes only the operator versions are checked (matching
types costs a few µs per node).

### Why does this matter?
ONNX Runtime fails at session creation with `Could not find an implementation
for X(version) node with name ...`, often after an FP16 or INT8 conversion that
introduced a type no CPU kernel handles, or on an old model whose opset
version ONNX Runtime dropped.

### Example
```
opset 6: Add(float, float)     # ONNX Runtime 1.32's Add kernels start at version 7
```

### Fix safety
No fix: the way out is converting the model to another opset or type, which
changes nodes.
"""

from __future__ import annotations

import functools
from collections import ChainMap
from collections.abc import Iterable, Mapping

import onnx

from onnx_lint.engines.engine import Engine
from onnx_lint.engines.onnx_inference import elem_types
from onnx_lint.engines.ort_registry import RuntimeFacts, runtime_facts
from onnx_lint.lint.context import LintContext
from onnx_lint.lint.diagnostics import Diagnostic, Location, Severity
from onnx_lint.lint.rule_api import Rule
from onnx_lint.model.graphs import GraphScope, onnx_domain
from onnx_lint.model.shapes import elem_type_name
from onnx_lint.rules.helpers import node_label

_ONNX_DOMAINS = ("", "ai.onnx.ml", "ai.onnx.preview.training")
# ONNX Runtime turns Constant nodes into initializers when it loads a graph: they need no kernel.
_NO_KERNEL_NEEDED = {("", "Constant")}
_FLOAT16, _FLOAT = "tensor(float16)", "tensor(float)"
# Matching element types costs ~2 µs per node (reading its input and output names) with the types read
# in bulk; above this many nodes only the operator-version check (per distinct operator) runs, so a
# plain lint of a huge graph stays fast.
TYPE_CHECK_MAX_NODES = 20_000


def type_string(elem_type: int) -> str:
    """``tensor(float16)``: how ONNX Runtime's kernel registry names an element type."""
    return f"tensor({elem_type_name(elem_type)})"


class RuntimeMissingKernel(Rule):
    code = "OL107"
    name = "runtime-missing-kernel"
    severity = Severity.ERROR
    summary = "No ONNX Runtime CPU kernel for a node's operator version or element types"

    def check(self, ctx: LintContext) -> Iterable[Diagnostic]:
        facts = runtime_facts()
        if facts is None:
            return
        opsets = {onnx_domain(o.domain): o.version for o in ctx.model.opset_import}
        known_domains = {domain for domain, _ in facts.kernels} | set(_ONNX_DOMAINS)
        answers: dict[tuple, str | None] = {}  # most nodes repeat an (op, types) combination
        check_types = sum(len(scope.graph.node) for scope in ctx.scopes) <= TYPE_CHECK_MAX_NODES
        own: dict[str, dict[str, int]] = {}  # each scope's own types, read once (parents come first)
        for scope in ctx.scopes:
            texts = scope.scan().texts
            if not check_types and not _any_missing(facts, set(zip(texts[0::3], texts[1::3])), opsets,
                                                    known_domains, answers):
                continue  # a large graph whose every operator has a kernel: no loop over its nodes
            types = _scope_types(ctx, scope, own) if check_types else {}
            for i in range(len(scope.graph.node)):
                op_type = texts[3 * i]
                domain = _checked_domain(op_type, texts[3 * i + 1], opsets, known_domains)
                if domain is None:
                    continue
                node = scope.graph.node[i] if check_types else None
                if node is not None:
                    key: tuple = (domain, op_type, tuple(map(types.get, node.input)),
                                  tuple(map(types.get, node.output)))
                else:
                    key = (domain, op_type)
                if key not in answers:
                    answers[key] = _missing(facts, node or scope.graph.node[i], domain, opsets[domain],
                                            types if check_types else None)
                problem = answers[key]
                if problem:
                    node = scope.graph.node[i]
                    yield self.report(
                        ctx, f"ONNX Runtime {facts.version} has no CPU kernel for node '{node_label(node)}': "
                        f"{problem}", Location.at_node(scope.path, i, node),
                        engine=Engine.ORT_REGISTRY)


def _scope_types(ctx: LintContext, scope: GraphScope, own: dict[str, dict[str, int]]) -> Mapping[str, int]:
    """Tensor name -> element type for every tensor visible in a scope, read in bulk: a node's key is then
    two ``map`` calls (a lookup per name costs ~1.5 µs of protobuf access, three per node). A name
    resolves inside out: the scope's derived values, then its dense initializers, then the
    enclosing scopes'; a sequence, map or optional value has type 0 and is not matched against
    tensor constraints; a name nothing defines is absent (``None``). ``own`` keeps each scope's
    table, so a graph with many subgraphs reads its enclosing graphs' types once, not per body."""
    table = {t.name: t.data_type for t in scope.graph.initializer}
    table.update(elem_types(ctx.oracle.values(scope.path)))
    own[scope.path] = table
    if scope.parent is None:
        return table
    return ChainMap(table, *(own[outer.path] for outer in scope.parent.outward()))


def _checked_domain(op_type: str, domain: str, opsets: dict[str, int], known_domains: set[str]) -> str | None:
    """The operator's domain as the registry names it, or ``None`` where no kernel is looked up (a domain
    ONNX Runtime does not know or the model does not import, or an operator that needs no kernel)."""
    domain = onnx_domain(domain)
    if domain not in known_domains or domain not in opsets or (domain, op_type) in _NO_KERNEL_NEEDED:
        return None
    return domain


def _any_missing(facts: RuntimeFacts, ops: set[tuple[str, str]], opsets: dict[str, int], known_domains: set[str],
                 answers: dict[tuple, str | None]) -> bool:
    """Whether some (op_type, domain) of ``ops`` has no kernel at its opset (types not considered);
    answers are kept by (domain, op_type), as the per-node loop keeps them when it skips types."""
    for op_type, written in ops:
        domain = _checked_domain(op_type, written, opsets, known_domains)
        if domain is None:
            continue
        key = (domain, op_type)
        if key not in answers:
            answers[key] = _missing(facts, onnx.NodeProto(op_type=op_type), domain, opsets[domain], None)
        if answers[key]:
            return True
    return False


@functools.lru_cache(maxsize=4096)
def _schema(op_type: str, opset: int, domain: str) -> onnx.defs.OpSchema | None:
    try:
        return onnx.defs.get_schema(op_type, opset, domain)
    except onnx.defs.SchemaError:
        return None


def _missing(facts: RuntimeFacts, node: onnx.NodeProto, domain: str, opset: int,
             types: Mapping[str, int] | None) -> str | None:
    schema = None
    if domain in _ONNX_DOMAINS:
        schema = _schema(node.op_type, opset, domain)
        if schema is None:
            return None  # no such operator at this opset: the checker's finding (OL102), not a kernel question
    version = schema.since_version if schema is not None else opset
    kernels = [k for k in facts.kernels.get((domain, node.op_type), []) if k[0] <= version <= k[1]]
    if not kernels:
        if schema is not None and _has_function(schema):
            return None  # no kernel for the op at this version: ONNX Runtime expands the function instead
        ranges = sorted({(a, b) for a, b, _ in facts.kernels.get((domain, node.op_type), [])})
        have = ", ".join(f"{a}-{b}" if b < 2**31 - 1 else f"{a}+" for a, b in ranges) or "none"
        return f"{node.op_type} version {version} (kernel versions: {have})"
    if schema is None or types is None:
        return None
    bound = _bind(schema, node, types)
    if not bound or any(_accepts(k[2], bound) for k in kernels):
        return None
    if _FLOAT16 in bound.values():
        as_float = {name: (_FLOAT if t == _FLOAT16 else t) for name, t in bound.items()}
        if any(_accepts(k[2], as_float) for k in kernels):
            return None  # the CPU provider casts FLOAT16 to FLOAT around such a node
    shown = ", ".join(f"{name}={t}" for name, t in sorted(bound.items()))
    return f"{node.op_type} version {version} with {shown}"


def _has_function(schema: onnx.defs.OpSchema) -> bool:
    # Real attributes of OpSchema that onnx's type stubs do not declare.
    return bool(getattr(schema, "has_function", False) or getattr(schema, "has_context_dependent_function", False))


def _bind(schema: onnx.defs.OpSchema, node: onnx.NodeProto, types: Mapping[str, int]) -> dict[str, str]:
    """Type-constraint name -> the node's type for it, where inference knows the type."""
    bound: dict[str, str] = {}
    for formals, actuals in ((schema.inputs, node.input), (schema.outputs, node.output)):
        for k, name in enumerate(actuals):
            if not name or not formals:
                continue
            formal = formals[k] if k < len(formals) else formals[-1]
            if k >= len(formals) and formal.option != onnx.defs.OpSchema.FormalParameterOption.Variadic:
                continue
            elem_type = types.get(name)
            if elem_type:
                bound.setdefault(formal.type_str, type_string(elem_type))
    return bound


def _accepts(constraints: dict[str, list[str]], bound: dict[str, str]) -> bool:
    return all(name not in bound or bound[name] in allowed for name, allowed in constraints.items())

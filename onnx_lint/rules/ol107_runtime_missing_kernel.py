"""## runtime-missing-kernel (OL107)

### What it does
Flags a model that ONNX Runtime refuses to create a session for because a node
has no CPU kernel, or because its kernel rejects the node when it is built (an
RNN with `layout=1`, a StringNormalizer locale the runtime lacks), quoting
ONNX Runtime's own message at the node it names.

The verdict is ONNX Runtime's, asked in this run: a session is created in a
bounded child process (warm across the files of one run) whenever the model can
be asked about (onnxruntime installed, no external data, at most 20,000 nodes,
within the child's memory cap). Small models (up to 1,000 nodes) are always
asked. Larger ones are asked where ONNX Runtime's kernel registry
(`get_all_opkernel_def`, read once per installed version and cached) finds a
node without a kernel, or cannot decide one by construction: an operator
version only a function body covers (ONNX Runtime may or may not expand it, and
the body's own operators need kernels too), an ONNX domain it registers no
kernels for (`ai.onnx.preview`), an element type inference does not know. The
registry matches kernels to nodes as ONNX Runtime does: by the operator
schema's since-version, where an open-ended kernel (`QuantizeLinear 25+`)
matches only its own start version. FLOAT16 nodes with only a FLOAT kernel
count as covered (the CPU provider inserts Casts around them).

A model ONNX Runtime cannot be asked about (external weights, more than 20,000
nodes) gets the registry's reading, said to be the registry's: per node, the
operator version or element types no kernel covers. A refusal for another reason
(a type error, a too-new opset) is OL102's or OL106's.

### Why does this matter?
ONNX Runtime fails at session creation with `Could not find an implementation
for X(version) node with name ...`, often after an FP16 or INT8 conversion that
introduced a type no CPU kernel handles, on an old model whose opset version
ONNX Runtime dropped, or on an opset newer than its kernels.

### Example
```
opset 6: Add(float, float)     # ONNX Runtime 1.32's Add kernels start at version 7
opset 28: QuantizeLinear       # ONNX Runtime 1.32's kernel is QuantizeLinear 25 (open-ended)
```

### Fix safety
No fix: the way out is converting the model to another opset or type, which
changes nodes.
"""

from __future__ import annotations

import functools
import re
from collections import ChainMap
from collections.abc import Iterable, Iterator, Mapping

import onnx

from onnx_lint.engines.engine import Engine
from onnx_lint.engines.onnx_inference import elem_types
from onnx_lint.engines.ort_load_check import runtime_refusal_to_ask
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
# ONNX Runtime's "no end version" for a kernel.
_OPEN_ENDED = 2**31 - 1
# Matching element types costs ~2 µs per node (reading its input and output names) with the types read
# in bulk; above this many nodes only the operator-version check (per distinct operator) runs, so a
# plain lint of a huge graph stays fast.
TYPE_CHECK_MAX_NODES = 20_000
# Up to this many nodes ONNX Runtime is always asked (a session costs milliseconds in a warm child): the
# registry cannot see a kernel that rejects a node's attributes when it is built.
ASK_ALWAYS_MAX_NODES = 1_000
# ONNX Runtime's words for a refusal that is a kernel's: none found, or one that failed to build.
_KERNEL_REFUSALS = ("Could not find an implementation", "Failed to find kernel", "is not a registered function/op",
                    "Exception during initialization", "kernel is not supported")


def type_string(elem_type: int) -> str:
    """``tensor(float16)``: how ONNX Runtime's kernel registry names an element type."""
    return f"tensor({elem_type_name(elem_type)})"


class RuntimeMissingKernel(Rule):
    code = "OL107"
    name = "runtime-missing-kernel"
    severity = Severity.ERROR
    summary = "ONNX Runtime has no CPU kernel for a node (or its kernel rejects the node), in its own words"

    def prepare(self, ctx: LintContext) -> None:
        """Ask ONNX Runtime now where ``check`` will surely ask it (a model this small): the session's
        child then runs while ONNX Runtime's symbolic engine, started early for its own operators, runs
        on the other core, instead of one after the other."""
        if sum(len(scope.graph.node) for scope in ctx.scopes) <= ASK_ALWAYS_MAX_NODES and runtime_facts() is not None \
                and runtime_refusal_to_ask(ctx.loaded) is None:
            ctx.runtime_refusal  # noqa: B018 -- computed and kept by the context

    def check(self, ctx: LintContext) -> Iterable[Diagnostic]:
        facts = runtime_facts()
        if facts is None:
            return
        undecided: list[bool] = []
        found = list(_registry_findings(ctx, facts, undecided))
        unasked = runtime_refusal_to_ask(ctx.loaded)
        if unasked is not None:  # the registry's reading, said to be the registry's
            for scope, index, problem in found:
                node = scope.graph.node[index]
                yield self.report(
                    ctx, f"ONNX Runtime {facts.version}'s kernel registry has no CPU kernel for node "
                    f"'{node_label(node)}': {problem} (ONNX Runtime itself was not asked: {unasked})",
                    Location.at_node(scope.path, index, node), engine=Engine.ORT_REGISTRY)
            return
        nodes = sum(len(scope.graph.node) for scope in ctx.scopes)
        if not found and not undecided and nodes > ASK_ALWAYS_MAX_NODES:
            return  # the registry covers every node by construction
        refusal = ctx.runtime_refusal
        if refusal is None or not any(words in refusal for words in _KERNEL_REFUSALS):
            return  # ONNX Runtime loads the model, or refuses it for another rule's reason
        unregistered = re.search(r"([\w.]+):\w+\(-?\d+\) is not a registered function/op", refusal)
        if unregistered and _custom_domain(unregistered.group(1), facts):
            return  # a custom-op library the user registers may supply it
        location, where = _locate(ctx, refusal, found)
        said = re.sub(r"^\[ONNXRuntimeError\] : \d+ : ", "", refusal)
        registry = next((f" (its kernel registry: {problem})" for scope, index, problem in found
                         if location.path == Location.at_node(scope.path, index, scope.graph.node[index]).path), "")
        yield self.report(ctx, f"ONNX Runtime {facts.version} refuses to create a session{where}: {said}{registry}",
                          location, engine=Engine.ORT_SESSION)


def _registry_findings(ctx: LintContext, facts: RuntimeFacts, undecided: list[bool]
                       ) -> Iterator[tuple[GraphScope, int, str]]:
    """Nodes the kernel registry finds no kernel for, as ONNX Runtime matches kernels; appends to ``undecided``
    once for a node the registry cannot decide by construction."""
    opsets = {onnx_domain(o.domain): o.version for o in ctx.model.opset_import}
    known_domains = {domain for domain, _ in facts.kernels} | set(_ONNX_DOMAINS)
    answers: dict[tuple, tuple[str | None, bool]] = {}  # most nodes repeat an (op, types) combination
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
                if not undecided and _unregistered_onnx_domain(texts[3 * i + 1], known_domains):
                    undecided.append(True)
                continue
            node = scope.graph.node[i] if check_types else None
            if node is not None:
                key: tuple = (domain, op_type, tuple(map(types.get, node.input)), tuple(map(types.get, node.output)))
            else:
                key = (domain, op_type)
            if key not in answers:
                answers[key] = _missing(facts, node or scope.graph.node[i], domain, opsets[domain],
                                        types if check_types else None)
            problem, unsure = answers[key]
            if unsure and not undecided:
                undecided.append(True)
            if problem:
                yield scope, i, problem


def _custom_domain(domain: str, facts: RuntimeFacts) -> bool:
    """Neither an ONNX domain nor one ONNX Runtime registers kernels in: a custom-op library's."""
    domain = onnx_domain(domain)
    return domain not in _onnx_schema_domains() and domain not in {d for d, _ in facts.kernels}


def _unregistered_onnx_domain(domain: str, known_domains: set[str]) -> bool:
    """An ONNX-defined domain (``ai.onnx.preview``) ONNX Runtime registers no kernel in."""
    domain = onnx_domain(domain)
    return domain not in known_domains and domain in _onnx_schema_domains()


@functools.lru_cache(maxsize=1)
def _onnx_schema_domains() -> frozenset[str]:
    return frozenset(onnx_domain(schema.domain) for schema in onnx.defs.get_all_schemas_with_history())


def _locate(ctx: LintContext, refusal: str, found: list[tuple[GraphScope, int, str]]) -> tuple[Location, str]:
    """The node ONNX Runtime's message names (by name, else by operator), and words for one found only through
    a function ONNX Runtime expands; the graph where it names none."""
    named = re.search(r"node with name '([^']+)'|\(node:'([^']+)'", refusal)
    name = (named.group(1) or named.group(2)) if named else None
    op = re.search(r"(?:implementation for|kernel for|[\w.]+:)\s*(\w+)\((-?\d+)\)", refusal)
    op_type = op.group(1) if op else None
    expanded: tuple[GraphScope, int] | None = None
    for scope in ctx.scopes:
        for index, node in enumerate(scope.graph.node):
            if (name and node.name == name) or (not name and op_type and node.op_type == op_type):
                return Location.at_node(scope.path, index, node), ""
            if expanded is None and op_type and op_type in _function_ops(ctx, scope, node):
                expanded = (scope, index)
    if expanded is not None:
        scope, index = expanded
        node = scope.graph.node[index]
        return (Location.at_node(scope.path, index, node),
                f" ({op_type} is in the function it expands for node '{node_label(node)}')")
    if found:
        scope, index, _ = found[0]
        return Location.at_node(scope.path, index, scope.graph.node[index]), ""
    mentioned = sorted({n.op_type for scope in ctx.scopes for n in scope.graph.node
                        if len(n.op_type) >= 3 and n.op_type.lower() in refusal.lower()}, key=len)
    for scope in ctx.scopes:  # a kernel's constructor failed: its source file names the operator
        for index, node in enumerate(scope.graph.node):
            if mentioned and node.op_type == mentioned[-1]:
                return Location.at_node(scope.path, index, node), ""
    return Location("graph"), ""


def _function_ops(ctx: LintContext, scope: GraphScope, node: onnx.NodeProto) -> frozenset[str]:
    """Operators in the function body ONNX defines for ``node``'s operator at the model's opset (a body that
    depends on the node, like Bernoulli's, is built for its attributes and input types)."""
    domain = onnx_domain(node.domain)
    opset = next((o.version for o in ctx.model.opset_import if onnx_domain(o.domain) == domain), None)
    schema = _schema(node.op_type, opset, domain) if opset is not None else None
    if schema is None:
        return frozenset()
    if schema.function_body.node:
        return frozenset(n.op_type for n in schema.function_body.node)
    if not _has_function(schema):
        return frozenset()
    known = {**{v.name: v for v in scope.graph.input}, **ctx.oracle.values(scope.path)}
    types = [known[name].type.SerializeToString() if name in known else None for name in node.input]
    if None in types:
        return frozenset()
    build = getattr(schema, "get_context_dependent_function", None)  # real, but not in onnx's type stubs
    if build is None:
        return frozenset()
    try:
        body = onnx.FunctionProto.FromString(build(node.SerializeToString(), types))
    except Exception:  # onnx raises bare errors for bodies it cannot build
        return frozenset()
    return frozenset(n.op_type for n in body.node)


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
                 answers: dict[tuple, tuple[str | None, bool]]) -> bool:
    """Whether some (op_type, domain) of ``ops`` has no kernel at its opset (types not considered);
    answers are kept by (domain, op_type), as the per-node loop keeps them when it skips types."""
    for op_type, written in ops:
        domain = _checked_domain(op_type, written, opsets, known_domains)
        if domain is None:
            continue
        key = (domain, op_type)
        if key not in answers:
            answers[key] = _missing(facts, onnx.NodeProto(op_type=op_type), domain, opsets[domain], None)
        if answers[key][0]:
            return True
    return False


@functools.lru_cache(maxsize=4096)
def _schema(op_type: str, opset: int, domain: str) -> onnx.defs.OpSchema | None:
    try:
        return onnx.defs.get_schema(op_type, opset, domain)
    except onnx.defs.SchemaError:
        return None


def _matches(kernel: tuple[int, int, dict[str, list[str]]], version: int) -> bool:
    """ONNX Runtime's rule: a kernel serves its start version, or any version in its range if the range ends;
    an open-ended kernel says nothing of operator versions added after it was written."""
    first, last = kernel[0], kernel[1]
    return first == version or (last != _OPEN_ENDED and first <= version <= last)


def _missing(facts: RuntimeFacts, node: onnx.NodeProto, domain: str, opset: int,
             types: Mapping[str, int] | None) -> tuple[str | None, bool]:
    """What the registry says no kernel covers (``None``: covered), and whether it cannot tell by construction."""
    schema = None
    if domain in _ONNX_DOMAINS:
        schema = _schema(node.op_type, opset, domain)
        if schema is None:
            return None, False  # no such operator at this opset: the checker's finding (OL102), not a kernel question
    version = schema.since_version if schema is not None else opset
    kernels = [k for k in facts.kernels.get((domain, node.op_type), []) if _matches(k, version)]
    if not kernels:
        if schema is not None and _has_function(schema):
            return None, True  # ONNX Runtime may expand the function, whose own operators need kernels: ask it
        ranges = sorted({(a, b) for a, b, _ in facts.kernels.get((domain, node.op_type), [])})
        # As ONNX Runtime matches them: a closed range, or one version (an open-ended kernel serves its start).
        have = ", ".join(f"{a}-{b}" if a < b < _OPEN_ENDED else str(a) for a, b in ranges) or "none"
        return f"{node.op_type} version {version} (kernel versions: {have})", False
    if schema is None or types is None:
        return None, False
    unknown = any(name and not types.get(name) for name in (*node.input, *node.output))
    bound = _bind(schema, node, types)
    if not bound or any(_accepts(k[2], bound) for k in kernels):
        return None, unknown
    if _FLOAT16 in bound.values():
        as_float = {name: (_FLOAT if t == _FLOAT16 else t) for name, t in bound.items()}
        if any(_accepts(k[2], as_float) for k in kernels):
            return None, unknown  # the CPU provider casts FLOAT16 to FLOAT around such a node
    shown = ", ".join(f"{name}={t}" for name, t in sorted(bound.items()))
    return f"{node.op_type} version {version} with {shown}", False


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

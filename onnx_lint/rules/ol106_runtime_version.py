"""## runtime-version-unsupported (OL106)

### What it does
Flags a model whose IR version, or whose opset import for a domain ONNX
Runtime knows (`ai.onnx`, `ai.onnx.ml`, `com.microsoft`, ...), is newer than
the *installed* ONNX Runtime loads. The limits are read from ONNX Runtime
itself (it is asked to load tiny probe models, once per installed version, in
a child process; the answer is cached in `~/.cache/onnx-lint`), never from a
hand-kept table. Silent when ONNX Runtime is not installed.

### Why does this matter?
ONNX Runtime refuses such a model at load time (`Unsupported model IR
version: 15, max supported IR version: 14`, `ONNX Runtime only *guarantees*
support for models stamped with official released onnx opset versions`),
after an export or conversion that looked successful. onnx and ONNX Runtime
are released separately, so a newer onnx writes versions an older runtime
cannot read.

### Example
```
opset_import: com.microsoft 2      # ONNX Runtime 1.32 knows com.microsoft 1
```

### Fix safety
No fix: lowering the IR version or an opset means converting operators
(`onnx.version_converter`), which changes nodes; upgrading ONNX Runtime is
the other way out.
"""

from __future__ import annotations

from collections.abc import Iterable

from onnx_lint.engines.engine import Engine
from onnx_lint.engines.ort_registry import runtime_facts
from onnx_lint.lint.context import LintContext
from onnx_lint.lint.diagnostics import Diagnostic, Location, Severity
from onnx_lint.lint.rule_api import Rule
from onnx_lint.model.graphs import onnx_domain


class RuntimeVersionUnsupported(Rule):
    code = "OL106"
    name = "runtime-version-unsupported"
    severity = Severity.ERROR
    summary = "IR version or opset newer than the installed ONNX Runtime loads"
    needs_inference = False
    reads_annotations = False

    def check(self, ctx: LintContext) -> Iterable[Diagnostic]:
        facts = runtime_facts()
        if facts is None:
            return
        model = ctx.model
        if facts.max_ir_version is not None and model.ir_version > facts.max_ir_version:
            yield self.report(
                ctx, f"IR version {model.ir_version} is newer than the installed ONNX Runtime {facts.version} "
                f"loads (up to {facts.max_ir_version})", Location("model/ir_version"), engine=Engine.ORT_REGISTRY)
        for i, opset in enumerate(model.opset_import):
            domain = onnx_domain(opset.domain)
            limit = facts.max_opsets.get(domain)
            if limit is not None and opset.version > limit:
                yield self.report(
                    ctx, f"opset {domain or 'ai.onnx'} {opset.version} is newer than the installed ONNX Runtime "
                    f"{facts.version} loads (up to {limit})", Location(f"model/opset_import[{i}]"),
                    engine=Engine.ORT_REGISTRY)

"""## qdq-present (OL202)

### What it does
Notes a model that already holds QuantizeLinear/DequantizeLinear nodes:
it has been quantized (or partly quantized) before.

### Why does this matter?
Running a quantizer again (`onnx-lint quantize`, ONNX Runtime's
`quantize_static`, ModelOpt) inserts a second Q/DQ pair around tensors that
are already quantized: accuracy drops twice, and the FP16 stage then has to
keep two sets of scales consistent. Quantize the float original instead, or
treat this model as already quantized. This is an info note, not a defect: a
Q/DQ model is a valid model.

A model `onnx-lint quantize` wrote is not noted: it carries its provenance in
`metadata_props` (`onnx_lint.quantized`: the onnx-lint version, the source
file, the calibration, the types and the number of Q/DQ nodes written), and
`onnx-lint quantize` itself refuses a Q/DQ input, so the advice is moot. Once
its Q/DQ nodes no longer number what the record says (edited after quantize,
or a record copied onto another model), it is noted like any Q/DQ model, and
the message says the record no longer matches.

### Example
```
x -> QuantizeLinear -> DequantizeLinear -> Conv
```
gives `graph: the model already holds 2 QuantizeLinear/DequantizeLinear nodes ...`.

### Fix safety
No fix: removing quantization is not a repair.
"""

from __future__ import annotations

from collections.abc import Iterable

from onnx_lint.lint.context import LintContext
from onnx_lint.lint.diagnostics import Diagnostic, Location, Severity
from onnx_lint.lint.rule_api import Rule
from onnx_lint.model.tensors import qdq_nodes
from onnx_lint.rules.helpers import quantize_record_note


class QdqPresent(Rule):
    code = "OL202"
    name = "qdq-present"
    severity = Severity.INFO
    summary = "The model already holds Q/DQ nodes (quantizing it again doubles them)"
    needs_inference = False
    reads_annotations = False

    def check(self, ctx: LintContext) -> Iterable[Diagnostic]:
        found = list(qdq_nodes(ctx.scopes))
        if not found:
            return
        edited = quantize_record_note(ctx.model, len(found))
        if edited is None:
            return  # onnx-lint quantize wrote it as it is: quantize refuses a Q/DQ input, so the advice is moot
        scope, index, node = found[0]
        yield self.report(
            ctx, f"the model already holds {len(found)} QuantizeLinear/DequantizeLinear node(s), the first at "
            f"{scope.path}/node[{index}]{edited}; quantizing it again would insert a second Q/DQ pair around "
            "quantized tensors; quantize the float original instead",
            Location.at_node(scope.path, index, node))

"""Stage 4, place: which nodes stay out of INT8 before any accuracy is measured, and which stay out of FP16.

Out of INT8 (``placement.py``): layers INT8 cannot speed up and output layers, each group unless it would
leave no Conv/MatMul/Gemm in INT8. Out of FP16: the user's ``--exclude-nodes``, every node whose output the
FP32 run saw beyond ``FP16_DATA_MAX``, and every node reading a constant beyond FP16's range (with that
constant's Constant node): ``activations.py``; each listed with its maximum.
"""

from __future__ import annotations

from onnx_lint.quantization.activations import (
    FP16_DATA_MAX,
    beyond_fp16,
    constants_beyond_fp16,
    observe,
    with_observed_shapes,
)
from onnx_lint.quantization.build import save
from onnx_lint.quantization.placement import HEAD_OPS, inferred_shapes, no_int8_gain, output_layers
from onnx_lint.quantization.report_parts import Fp32Placement, WideActivation
from onnx_lint.quantization.run_state import QuantizeRun


def place(run: QuantizeRun) -> None:
    run.progress.stage("Measuring activation ranges and shapes", 1)
    run.activations = observe(run.model, run.checked, run.work)
    if run.activations.note:
        run.report.warnings.append(f"activation ranges were not measured ({run.activations.note}): FP16 "
                                   "placement and INT8 coverage rely on static shapes only")
    run.progress.advance()
    # placement and the coverage report share them: static where ONNX inference knows, else as the run saw
    run.shapes = with_observed_shapes(inferred_shapes(run.model, run.sample_shapes), run.activations)
    run.first_excluded = frozenset(run.options.exclude_nodes) | _kept_fp16(run)
    int8_to_be = {n.name for n in run.model.graph.node if n.op_type in run.op_types and n.name
                  and n.name not in run.first_excluded} if run.int8 else set()
    candidates = {n.name for n in run.model.graph.node if n.name and n.name not in int8_to_be}
    candidates -= set(run.options.exclude_nodes)
    wide = beyond_fp16(run.model, run.activations, candidates)
    constants = constants_beyond_fp16(run.model, candidates)
    if any(e["constant_node"] for e in constants):  # unnamed Constant nodes got a name: the builds read the file
        save(run.model, run.fp32)
    run.keep_fp32 = frozenset(run.options.exclude_nodes) | {e["node"] for e in wide + constants} | {
        e["constant_node"] for e in constants if e["constant_node"]}
    if wide or constants:
        run.report.kept_in_fp32 = Fp32Placement(
            FP16_DATA_MAX,
            f"their outputs exceed {FP16_DATA_MAX:g} on the validation samples, or they read a constant beyond "
            "FP16's 65504 (OL201: FP16 conversion would clamp it); FP16 holds up to 65504, and values this large "
            "feed sums and products that overflow it (ModelOpt's AutoCast keeps such nodes in high precision with "
            "the same thresholds)",
            [WideActivation(e["node"], e["op_type"], e["max_abs"]) for e in wide],
            [WideActivation(e["node"], e["op_type"], e["max_abs"], e["constant"]) for e in constants])


def _kept_fp16(run: QuantizeRun) -> frozenset[str]:
    model, options = run.model, run.options
    excluded = set(options.exclude_nodes)
    kept: set[str] = set()
    groups = []
    if not options.int8_small_layers:
        groups.append(("no INT8 gain: a matrix-vector product, or too few channels for INT8 kernels (ModelOpt's "
                       "and TensorRT's rules; --int8-small-layers quantizes them)",
                       no_int8_gain(model, run.sample_shapes, run.op_types, inferred=run.shapes)))
    if not options.int8_output_layers:
        groups.append(("output layer: its INT8 rounding would reach the model's output undiluted "
                       "(--int8-output-layers quantizes it)",
                       output_layers(model, run.op_types)))
    for reason, names in groups:
        names = [n for n in names if n not in excluded and n not in kept]
        left = any(n.op_type in HEAD_OPS and n.name not in excluded | kept | set(names) for n in model.graph.node)
        if not names or not left:
            continue
        kept.update(names)
        run.report.kept_in_float.append({"reason": reason, "op_type": "/".join(sorted(
            {n.op_type for n in model.graph.node if n.name in names})), "nodes": sorted(names)})
    return frozenset(kept)

"""``onnx-lint quantize MODEL -o OUT``: repair, then INT8 (QDQ) + FP16, validated (docs/quantize.md)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from onnx_lint.base.errors import OnnxLintError
from onnx_lint.quantization.from_file import RANDOM_WARNING, quantize_file

if TYPE_CHECKING:
    pass

def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="onnx-lint quantize",
                                     description="Repair a model's annotations, then quantize it to INT8 (QDQ) "
                                                 "with the remaining float computation in FP16.")
    parser.add_argument("model", help="the FP32 model (it is not changed)")
    parser.add_argument("-o", "--output", required=True,
                        help="where to write the quantized model: a new file (an existing one needs --force)")
    parser.add_argument("--force", action="store_true", help="replace the output file if it exists")
    parser.add_argument("--calibration-data", help=".npz (keys are input names) or .npy (single-input models); "
                        "samples are split along axis 0")
    parser.add_argument("--calibration-method", choices=("auto", "minmax", "entropy", "percentile"), default="auto",
                        help="auto (default): calibrate once, build with MinMax and with entropy ranges, keep the "
                             "one closer to FP32 on the validation samples")
    parser.add_argument("--op-types", help="comma-separated operator types to quantize (default: Conv, ConvTranspose, "
                        "MatMul, Gemm and pooling; 'all': every type ONNX Runtime can quantize)")
    parser.add_argument("--exclude-nodes", help="comma-separated node names to keep in float")
    channel = parser.add_mutually_exclusive_group()
    channel.add_argument("--per-channel", dest="per_channel", action="store_true", default=True,
                         help="per-channel weight scales (default)")
    channel.add_argument("--per-tensor", dest="per_channel", action="store_false",
                         help="one scale per weight tensor")
    parser.add_argument("--target", choices=("onnxruntime", "tensorrt"), default="onnxruntime",
                        help="the runtime the model is for: onnxruntime (default; asymmetric INT8 activations) or "
                             "tensorrt (every zero-point 0, float biases: what TensorRT's explicit quantization "
                             "builds; checked with OL205 before writing)")
    parser.add_argument("--output-qdq", action="store_true",
                        help="also quantize each op's output (ONNX Runtime's default); by default only op inputs "
                             "get Q/DQ, as TensorRT expects")
    parser.add_argument("--int8-output-layers", action="store_true",
                        help="quantize the last Conv/MatMul/Gemm before each model output too (by default they stay "
                             "FP16: their INT8 rounding reaches the output undiluted)")
    parser.add_argument("--int8-small-layers", action="store_true",
                        help="quantize also the MatMul/Gemm/Conv layers INT8 cannot speed up (matrix-vector products, "
                             "fewer than 16 channels; by default they stay FP16, as ModelOpt leaves them)")
    io = parser.add_mutually_exclusive_group()
    io.add_argument("--keep-io-types", dest="keep_io_types", action="store_true", default=True,
                    help="keep float32 model inputs and outputs (default)")
    io.add_argument("--no-keep-io-types", dest="keep_io_types", action="store_false",
                    help="make model inputs and outputs FP16 too")
    parser.add_argument("--input-shape", action="append", default=[], metavar="NAME=1x3x224x224",
                        help="shape of random calibration inputs, for dims the model leaves open (-1 or a symbol; "
                             "by default 1 for the first axis, 32 for the others)")
    parser.add_argument("--samples", type=int, default=8, help="number of random samples (default 8)")
    parser.add_argument("--validation-samples", type=int, default=16,
                        help="compare with FP32 on the first N calibration samples (0: all; default 16)")
    parser.add_argument("--min-cosine", type=float, default=None,
                        help="accuracy target: when an output's cosine similarity is lower, the nodes that add the "
                             "most error move from INT8 to FP16, group by group, until it is met (exit 1, nothing "
                             "written, if it cannot be)")
    parser.add_argument("--max-fallback-time", "--fallback-seconds", dest="fallback_seconds", type=float,
                        default=300.0,
                        help="time the --min-cosine fallback may spend building and validating (default 300)")
    parser.add_argument("--sensitivity-time", dest="sensitivity_seconds", type=float, default=120.0,
                        help="at most this many seconds to measure the error each INT8 node causes alone at the "
                             "outputs (default 120; within that, as long as the run took so far with --min-cosine, a "
                             "tenth of it without; 0: not measured)")
    parser.add_argument("--report", help="write the report as JSON to this file (with --min-cosine, the frontier "
                                         "plot goes beside it: FILE.frontier.svg)")
    parser.add_argument("--quiet", "-q", action="store_true", help="no progress output")
    return parser


def _split(value: str | None) -> tuple[str, ...] | None:
    return tuple(v.strip() for v in value.split(",") if v.strip()) if value else None


def main(argv: list[str]) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return 0 if exc.code == 0 else 2
    try:
        return run(args)
    except OnnxLintError as exc:
        message = str(exc)
        if args.model not in message:  # every failure names the file
            message = f"{args.model}: {message}"
        from onnx_lint.formats.text import terminal_safe

        print(f"onnx-lint: error: {terminal_safe(message)}", file=sys.stderr)
        return getattr(exc, "exit_code", 2)
    except KeyboardInterrupt:
        print("onnx-lint: interrupted; nothing was written", file=sys.stderr)
        return 130


def run(args: argparse.Namespace) -> int:
    try:
        import onnxruntime  # noqa: F401
    except ImportError:
        print("onnx-lint: error: quantize needs ONNX Runtime: pip install 'onnx-lint[runtime]'", file=sys.stderr)
        return 2
    from onnx_lint.base.progress import terminal_progress
    from onnx_lint.commands.report import write_text_output
    from onnx_lint.quantization.calibration import parse_input_shape
    from onnx_lint.quantization.options import QuantizeError
    from onnx_lint.quantization.pipeline import QuantizeOptions, refuse_existing_output
    from onnx_lint.quantization.report import format_summary

    source, output = Path(args.model), Path(args.output)
    if output.resolve() == source.resolve():
        print("onnx-lint: error: -o must name a new file; the input model is never changed", file=sys.stderr)
        return 2
    refuse_existing_output(output, args.force)
    overrides = dict(parse_input_shape(s) for s in args.input_shape)
    data = Path(args.calibration_data) if args.calibration_data else None
    options = QuantizeOptions(args.calibration_method, _split(args.op_types), _split(args.exclude_nodes) or (),
                              args.per_channel, args.keep_io_types, max(0, args.validation_samples),
                              args.min_cosine, max(0.0, args.fallback_seconds), args.output_qdq,
                              args.int8_output_layers, args.int8_small_layers, force=args.force, target=args.target,
                              sensitivity_seconds=max(0.0, args.sensitivity_seconds))
    progress = terminal_progress(args.quiet)
    try:
        report, random = quantize_file(source, output, data, overrides, args.samples, options, progress,
                                       on_random=lambda: print(RANDOM_WARNING, file=sys.stderr))
    except BrokenPipeError:  # the reader of our progress went away (`| head`): the CLI's own handler says so
        raise
    except OSError as exc:  # a full TMPDIR, a read-only output folder: the file and the problem, no traceback
        raise QuantizeError(f"{exc.filename or output}: {exc.strerror or exc}; nothing was written") from None
    finally:
        progress.close()
    if args.report:
        record = report.to_json()
        if random:  # printed once, at the start; the JSON report keeps it too
            record["warnings"].insert(0, RANDOM_WARNING)
        from onnx_lint.quantization.frontier_plot import frontier_svg

        plot = frontier_svg(report.fallback)
        if plot is not None:  # beside the report: r.json -> r.frontier.svg
            record["frontier_plot"] = str(Path(args.report).with_suffix(".frontier.svg"))
            write_text_output(Path(record["frontier_plot"]), plot, "the frontier plot")
        write_text_output(Path(args.report), json.dumps(record, indent=2) + "\n", "the quantize report")
    from onnx_lint.formats.escape import safe_text  # the summary's names are escaped where they are inserted

    print(safe_text(format_summary(report), keep_layout=True))
    for warning in report.warnings:
        print(safe_text(warning), file=sys.stderr)
    return report.exit_code

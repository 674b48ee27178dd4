"""What a user can ask of quantize, and the error it answers with when it cannot.

The CLI, the language server and the Python API build the same ``QuantizeOptions``;
the pipeline reads them and nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass

from onnx_lint.base.errors import OnnxLintError

# Quantized by default: the ops where INT8 pays (ModelOpt's and TensorRT's choice); the rest stays FP16.
# ORT's default (every op of its registries: Add, Mul, Softmax, PRelu, Concat, ...) costs accuracy for
# little speed: mtcnn onet cosine 0.99914 with it, 0.99955 with these.
COMPUTE_OPS = frozenset({"Conv", "ConvTranspose", "MatMul", "Gemm", "MaxPool", "AveragePool", "GlobalAveragePool"})
EXIT_FP16_ONLY = 3  # written, but FP16 only: nothing could be quantized to INT8

# Where the written model is to run. ``onnxruntime``: asymmetric INT8 activations (a zero-point of their own, all
# 256 levels for a ReLU output). ``tensorrt``: what TensorRT's explicit quantization builds an engine from, int8
# zero-points equal to 0 everywhere (symmetric activations and weights), Q/DQ on the inputs of the layers it runs
# in INT8 only, float biases (TensorRT takes no int32 DequantizeLinear); the written model must pass OL205.
TARGETS = ("onnxruntime", "tensorrt")


class QuantizeError(OnnxLintError):
    """The pipeline cannot produce a valid model; ``exit_code`` 1 means "nothing to do"."""

    def __init__(self, message: str, exit_code: int = 2) -> None:
        super().__init__(message)
        self.exit_code = exit_code


@dataclass(frozen=True)
class QuantizeOptions:
    calibration_method: str = "auto"  # minmax and entropy, the closer to FP32 kept (ranges.calibrate)
    op_types: tuple[str, ...] | None = None
    exclude_nodes: tuple[str, ...] = ()
    per_channel: bool = True  # per-channel Conv/MatMul weights: mtcnn onet cosine 0.99715 -> 0.99900
    keep_io_types: bool = True
    validation_samples: int = 16  # 0: every calibration sample
    min_cosine: float | None = None  # a target: nodes move to FP16 until every output reaches it
    fallback_seconds: float = 300.0  # time for the accuracy-driven fallback, after the first build
    output_qdq: bool = False  # Q/DQ on op outputs too (ONNX Runtime's default) instead of inputs only
    int8_output_layers: bool = False  # True: the last Conv/MatMul/Gemm before each output is INT8 too
    int8_small_layers: bool = False  # True: also the MatMul/Gemm/Conv that INT8 cannot speed up (placement.py)
    force: bool = False  # True: an existing output file is replaced; otherwise it is refused
    target: str = "onnxruntime"  # one of TARGETS
    sensitivity_seconds: float = 120.0  # time to measure each INT8 node's error alone (0: not measured)

    def __post_init__(self) -> None:
        if self.target not in TARGETS:
            raise QuantizeError(f"unknown target '{self.target}': one of {', '.join(TARGETS)}")
        if self.target == "tensorrt" and self.output_qdq:
            raise QuantizeError("--output-qdq does not go with --target tensorrt: TensorRT fuses Q/DQ on the inputs "
                                "of the layers it runs in INT8, and a Q/DQ on their outputs adds a rounding it "
                                "cannot fuse")

    @property
    def symmetric_activations(self) -> bool:
        return self.target == "tensorrt"


def quantized_op_types(options: QuantizeOptions) -> list[str]:
    """The op types to quantize: the user's (``all``: both of ORT's registries), else ``COMPUTE_OPS``."""
    if options.op_types and "all" not in options.op_types:
        return list(options.op_types)
    if not options.op_types:
        return sorted(COMPUTE_OPS)
    from onnxruntime.quantization.registry import QDQRegistry, QLinearOpsRegistry

    return sorted(set(QDQRegistry) | set(QLinearOpsRegistry))

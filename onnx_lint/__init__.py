"""onnx-lint: find and safely fix stale shapes and missing types in ONNX models."""

__version__ = "0.1.0"

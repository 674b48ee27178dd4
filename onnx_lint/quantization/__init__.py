"""INT8 + FP16 quantization of a repaired model (docs/quantize.md).

The order that works (see FIELD-NOTES): safe fixes in memory, opset raised to
>= 19, ONNX Runtime static QDQ quantization, FP16 conversion of what remains
float (Q/DQ scales included), topological order, then validation in a child
process against the FP32 model. onnxruntime is imported only here.
"""

"""The onnx-lint language server (``onnx-lint server``), built on pygls 2.

It uses the engine (linting, fixing, quantize) and runs all of it in worker
processes; the engine knows nothing of it.
"""

"""Put on PYTHONPATH by a test: makes the quantize validation child abort, as a crashing ONNX Runtime does.

Python imports ``sitecustomize`` in every process it starts; only the one that
runs the validation script (``python -c <bootstrap> onnx-lint-sandboxed-child
quantize-validation``, its request on stdin) is killed.
"""

import os
import sys

if sys.argv == ["-c", "onnx-lint-sandboxed-child", "quantize-validation"]:
    os.abort()

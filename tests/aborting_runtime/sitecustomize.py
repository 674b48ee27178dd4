"""Put on PYTHONPATH by a test: makes the quantize validation child abort, as a crashing ONNX Runtime does.

Python imports ``sitecustomize`` in every process it starts; only the one that
runs the validation script (``python -c <script> <samples>.npz ...``) is killed.
"""

import os
import sys

if sys.argv[:1] == ["-c"] and len(sys.argv) > 1 and sys.argv[1].endswith(".npz"):
    os.abort()

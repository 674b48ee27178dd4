"""The package version, in the bottom layer so that any layer may print it.

``onnx_lint.__version__`` re-exports it (pyproject.toml's dynamic version reads it there);
importing the top package from below would import the Python API and every layer with it.
"""

__version__ = "0.1.0"

"""Allow ``python -m onnx_lint``."""

from onnx_lint.cli import run

# The guard matters: worker processes started with "spawn" import this module again.
if __name__ == "__main__":
    run()

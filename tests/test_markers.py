"""The markers the fast loop rests on name real test modules and registered markers.

A slow module renamed without its entry in ``MODULE_MARKERS`` would fall into the fast loop unseen.
"""

from __future__ import annotations

import sys

from conftest import MODULE_MARKERS, REPO

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib


def test_every_marked_module_exists_and_every_marker_is_registered():
    modules = {path.stem for path in (REPO / "tests").glob("test_*.py")}
    assert set(MODULE_MARKERS) <= modules, set(MODULE_MARKERS) - modules
    settings = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    registered = {line.partition(":")[0] for line in settings["markers"]}
    assert {marker for markers in MODULE_MARKERS.values() for marker in markers} <= registered
    assert "--strict-markers" in settings["addopts"].split()
    # The editors' modules take minutes: never in the fast loop.
    assert all("slow" in markers for markers in MODULE_MARKERS.values() if "editors" in markers)

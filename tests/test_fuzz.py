"""A bounded fuzz run in CI: 200 mutated models through lint, fix and re-fix (see ``fuzzing.py``).

The run is derandomized so CI is repeatable; ``scripts/fuzz.py`` runs the same
target for as long as asked, with fresh randomness.
"""

from __future__ import annotations

import tempfile
from collections import Counter
from pathlib import Path

from fuzzing import check_properties, draw_model
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

CI_EXAMPLES = 200


def test_mutated_models_never_crash_and_fixes_keep_their_promises():
    outcomes: Counter[str] = Counter()

    @settings(max_examples=CI_EXAMPLES, deadline=None, derandomize=True, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(st.data())
    def one_example(data):
        _seed, model = draw_model(data.draw)
        with tempfile.TemporaryDirectory() as folder:
            outcomes[check_properties(Path(folder), model)] += 1

    one_example()
    # The mutations reach every path: files refused, fixed, and left alone.
    assert outcomes["refused"] and outcomes["fixed"] and outcomes["clean"] + outcomes["findings"], outcomes

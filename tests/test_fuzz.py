"""A bounded fuzz run in CI: 200 mutated models through lint, fix and re-fix (see ``fuzzing.py``).

The run is derandomized so CI is repeatable; ``scripts/fuzz.py`` runs the same
target for as long as asked, with fresh randomness.
"""

from __future__ import annotations

from collections import Counter

from fuzzing import fuzz

CI_EXAMPLES = 200


def test_mutated_models_never_crash_and_fixes_keep_their_promises():
    outcomes: Counter[str] = Counter()
    fuzz(CI_EXAMPLES, outcomes, derandomize=True)
    # The mutations reach every path: files refused, fixed, and left alone.
    assert outcomes["refused"] and outcomes["fixed"] and outcomes["clean"] + outcomes["findings"], outcomes

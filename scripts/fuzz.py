"""The long fuzz run: the CI fuzz target (tests/fuzzing.py) for as many examples as asked.

    python scripts/fuzz.py --examples 5000            # fresh randomness each run
    python scripts/fuzz.py --examples 500 --seed 7    # repeatable

Prints what the examples came to (refused, clean, findings, fixed, fix refused)
and the time taken. On a failure, Hypothesis shrinks it to a small example;
its bytes are saved to ``--failures`` and the script exits 1.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "tests")]

from fuzzing import fuzz  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--examples", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=None, help="make the run repeatable")
    parser.add_argument("--failures", type=Path, default=Path("fuzz-failures"))
    args = parser.parse_args(argv)

    outcomes: Counter[str] = Counter()
    failing: list[bytes] = []
    started = time.perf_counter()
    try:
        fuzz(args.examples, outcomes, seed=args.seed, failing=failing, progress_every=500)
    except Exception as exc:
        print(f"FAILED after {sum(outcomes.values())} passing examples: {type(exc).__name__}: {exc}")
        if failing:
            args.failures.mkdir(parents=True, exist_ok=True)
            path = args.failures / f"{hashlib.sha256(failing[-1]).hexdigest()[:16]}.onnx"
            path.write_bytes(failing[-1])
            print(f"smallest failing model saved to {path}")
        return 1
    elapsed = time.perf_counter() - started
    total = sum(outcomes.values())
    parts = ", ".join(f"{outcomes[k]} {k}" for k in ("refused", "clean", "findings", "fixed", "fix refused"))
    print(f"{total} examples in {elapsed:.0f} s ({total / elapsed:.1f}/s), no failure: {parts}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""``check --shard K/N``: the shards of a CI matrix partition the files, the same way on every run."""

from __future__ import annotations

import json

import onnx
from conftest import run_process

from examples import defects

SHARDS = 4


def _tree(root):
    """24 defective models in nested folders: each one shows up in the JSON of the shard that checks it."""
    model = defects.stale_rank0_output()
    names = [f"{folder}/m{i}.onnx" for folder in ("a", "b/c", "d") for i in range(8)]
    for name in names:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        onnx.save_model(model, root / name)
    return set(names)


def _files_of(root, shard: str, *paths: str) -> set[str]:
    done = run_process("check", *paths, "--shard", shard, "--output-format", "json", "--exit-zero", "--no-cache",
                       cwd=root)
    assert done.code == 0, done.err
    return {d["file"] for d in json.loads(done.out)}


def test_the_shards_partition_the_files(tmp_path):
    names = _tree(tmp_path)
    shards = [_files_of(tmp_path, f"{k}/{SHARDS}", ".") for k in range(1, SHARDS + 1)]
    assert set().union(*shards) == names
    assert sum(len(s) for s in shards) == len(names)  # no file in two shards
    assert all(shards), "a shard with no file: the hash does not spread 24 paths over 4 shards"
    # Stable: the same paths named another way (folders listed one by one) land in the same shards.
    assert _files_of(tmp_path, f"2/{SHARDS}", "d", "a", "b") == shards[1]


def test_one_shard_is_everything_and_a_bad_shard_is_a_usage_error(tmp_path):
    names = _tree(tmp_path)
    assert _files_of(tmp_path, "1/1", ".") == names
    for bad in ("0/4", "5/4", "2", "a/b"):
        done = run_process("check", ".", "--shard", bad, cwd=tmp_path)
        assert done.code == 2 and "--shard" in done.err and "K/N" in done.err, (bad, done.err)

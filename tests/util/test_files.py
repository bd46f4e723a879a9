"""Atomic files: a reader sees the old file or the new one, never half of one."""

from pathlib import Path

import pytest

from nca_core.util.files import atomic_file, write_atomic


def test_the_file_appears_whole_and_nothing_else_is_left(tmp_path):
    target = tmp_path / "model.npz"
    write_atomic(target, b"new contents")
    assert target.read_bytes() == b"new contents"
    assert [p.name for p in tmp_path.iterdir()] == ["model.npz"]
    assert target.stat().st_mode & 0o777 == 0o644  # readable as a file written in place, not private


def test_a_replaced_file_keeps_its_mode(tmp_path):
    target = tmp_path / "metrics.json"
    target.write_bytes(b"old")
    target.chmod(0o600)
    write_atomic(target, b"new")
    assert (target.read_bytes(), target.stat().st_mode & 0o777) == (b"new", 0o600)


def test_an_error_while_writing_keeps_the_old_file_and_removes_the_temporary_one(tmp_path):
    target = tmp_path / "metrics.json"
    target.write_bytes(b"old")
    with pytest.raises(RuntimeError, match="disk full"), atomic_file(target) as out:
        out.write(b"half of the ne")
        assert target.read_bytes() == b"old"  # not renamed while being written
        raise RuntimeError("disk full")
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["metrics.json"]


def test_a_check_sees_the_finished_file_and_can_refuse_it(tmp_path):
    target = tmp_path / "train-images.gz"
    seen = []

    def refuse(temp):
        seen.append((temp.name.endswith(".part.gz"), temp.read_bytes()))
        raise ValueError("checksum differs")

    with pytest.raises(ValueError, match="checksum"), atomic_file(target, suffix=".part.gz", check=refuse) as out:
        out.write(b"altered")
    assert seen == [(True, b"altered")]
    assert not target.exists() and list(tmp_path.iterdir()) == []


def test_file_locks_are_a_fixed_set_and_the_same_for_the_same_file():
    from nca_core.util.files import FileLocks

    locks = FileLocks(4)
    assert locks(Path("costs/a.json")) is locks(Path("costs/a.json"))
    assert len({id(locks(Path(f"costs/{i}.json"))) for i in range(1000)}) <= 4

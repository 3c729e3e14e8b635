"""A table's files are reached through no link, read bounded, and deleted without following one."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from catalog.data.expiry import remove_files, remove_table_folder
from catalog.data.table_files import (
    ReadDeadlineError,
    TableFileError,
    entries,
    file_status,
    read_file,
    remove_file,
)


@pytest.fixture
def tables(tmp_path: Path) -> tuple[Path, Path]:
    """Two table folders: T1 (the attacker's, empty) and T2 (the victim's, one data file)."""
    t1, t2 = tmp_path / "t1", tmp_path / "t2"
    (t1 / "data").mkdir(parents=True)
    (t2 / "data").mkdir(parents=True)
    (t2 / "data" / "a.parquet").write_bytes(b"victim")
    return t1, t2


def _read(folder: Path, relative: str, limit: int = 1 << 20) -> bytes:
    far = time.monotonic() + 60
    return read_file(str(folder), relative, "file", relative, limit=limit, deadline=far)[1]


def test_a_regular_file_is_read_and_its_status_given(tables: tuple[Path, Path]) -> None:
    _, t2 = tables
    assert _read(t2, "data/a.parquet") == b"victim"
    assert file_status(str(t2), "data/a.parquet", "file", "a").size == 6


@pytest.mark.parametrize("through", ["file", "folder", "table folder"])
def test_a_link_anywhere_at_or_below_the_folder_is_refused(
    tables: tuple[Path, Path], through: str
) -> None:
    t1, t2 = tables
    if through == "file":
        (t1 / "data" / "a.parquet").symlink_to(t2 / "data" / "a.parquet")
        folder, relative = t1, "data/a.parquet"
    elif through == "folder":
        (t1 / "linked").symlink_to(t2 / "data", target_is_directory=True)
        folder, relative = t1, "linked/a.parquet"
    else:
        (t1.parent / "t3").symlink_to(t2, target_is_directory=True)
        folder, relative = t1.parent / "t3", "data/a.parquet"
    for check in (
        lambda: _read(folder, relative),
        lambda: file_status(str(folder), relative, "file", "x"),
    ):
        with pytest.raises(TableFileError, match="symbolic link") as refused:
            check()
        assert not refused.value.missing


def test_special_files_and_paths_leaving_the_folder_are_refused(tables: tuple[Path, Path]) -> None:
    t1, _ = tables
    os.mkfifo(t1 / "data" / "fifo")
    with pytest.raises(TableFileError, match="is not a regular file"):
        _read(t1, "data/fifo")  # opened without blocking, then refused: no writer needed
    with pytest.raises(TableFileError, match="is not a regular file"):
        _read(t1, "data")
    for relative in ("../t2/data/a.parquet", "data/../../t2/data/a.parquet", "", "data/"):
        with pytest.raises(TableFileError, match="is not a path inside"):
            _read(t1, relative)
    with pytest.raises(TableFileError, match="does not exist") as missing:
        _read(t1, "data/none.parquet")
    assert missing.value.missing


def test_a_read_is_capped_in_bytes_and_cut_by_its_deadline(tables: tuple[Path, Path]) -> None:
    t1, _ = tables
    (t1 / "data" / "big").write_bytes(bytes(3 << 20))
    with pytest.raises(TableFileError, match=f"has {3 << 20} bytes, more than the 1024"):
        _read(t1, "data/big", limit=1024)
    with pytest.raises(ReadDeadlineError, match="took longer than allowed"):
        read_file(str(t1), "data/big", "file", "big", limit=4 << 20, deadline=time.monotonic())


def test_deleting_removes_a_link_itself_and_never_passes_a_linked_folder(
    tables: tuple[Path, Path],
) -> None:
    t1, t2 = tables
    (t1 / "data" / "link.parquet").symlink_to(t2 / "data" / "a.parquet")
    (t1 / "linked").symlink_to(t2 / "data", target_is_directory=True)
    assert remove_file(str(t1), "data/link.parquet")
    assert not (t1 / "data" / "link.parquet").is_symlink()
    with pytest.raises(TableFileError, match="symbolic link"):
        remove_file(str(t1), "linked/a.parquet")
    assert not remove_file(str(t1), "data/gone.parquet")
    # Data expiry: the linked path is left (with a warning), the victim's file stays.
    assert remove_files(str(t1), ["linked/a.parquet", "data/gone.parquet"]) == (0, True)
    assert (t2 / "data" / "a.parquet").read_bytes() == b"victim"


def test_a_dropped_tables_folder_reached_through_a_link_is_left(tmp_path: Path) -> None:
    warehouse = tmp_path / "warehouse"
    victim = tmp_path / "victim"
    (victim / "data").mkdir(parents=True)
    (victim / "data" / "a.parquet").write_bytes(b"victim")
    warehouse.mkdir()
    (warehouse / "table_7").symlink_to(victim, target_is_directory=True)
    remove_table_folder(str(warehouse), 7, None, live=[])
    assert (victim / "data" / "a.parquet").exists()
    inner = warehouse / "table_8"  # a real folder holding a link: the link goes, not its target
    inner.mkdir()
    (inner / "link").symlink_to(victim, target_is_directory=True)
    assert remove_table_folder(str(warehouse), 8, None, live=[])
    assert not inner.exists() and (victim / "data" / "a.parquet").exists()


def test_entries_list_links_as_links_and_never_enter_a_linked_folder(
    tables: tuple[Path, Path],
) -> None:
    t1, t2 = tables
    (t1 / "p0").symlink_to(t2 / "data", target_is_directory=True)
    listed = dict(entries(str(t1)))
    assert set(listed) == {"data", "p0"}
    assert listed["p0"].kind == "other" and listed["data"].kind == "folder"  # the link itself
    with pytest.raises(TableFileError, match="symbolic link"):
        entries(str(t1), "p0")
    assert entries(str(t1), "missing") == []


def test_a_folder_in_a_files_place_is_not_deleted_and_expiry_tries_again(
    tables: tuple[Path, Path],
) -> None:
    t1, _ = tables
    (t1 / "data" / "a.parquet").mkdir()
    with pytest.raises(IsADirectoryError):
        remove_file(str(t1), "data/a.parquet")
    assert remove_files(str(t1), ["data/a.parquet"]) == (0, False)

"""A table's Iceberg manifests: read from a writer's snapshot, written for the Spark source's.

A snapshot added through the Iceberg REST catalog names its manifest list; the server reads
it and its manifests (``snapshot_change``) to learn which data files the snapshot holds. A data
commit of the Spark source has no manifests: the server writes a manifest of its files (with
their null counts and bounds) and a manifest list (``write_manifests``), under
``<location>/metadata/``, so an Iceberg reader sees those files too. The Avro work is
PyIceberg's own manifest reader and writer, so the files are exactly what Iceberg readers
expect; the server reads and writes them in the warehouse's local folder or on S3
(``WarehouseIO``, through ``catalog.data.table_files``).

Every location read must be inside the table's folder: a snapshot cannot make the server
read, or the catalog record, a file elsewhere. A writer names the files read, so they are
read as untrusted input: with PyIceberg's Python Avro decoder, which fails cleanly on a
corrupt or hostile file (its compiled decoder does not check bounds and can crash the
process), and any file that cannot be read is refused with a 400.
"""

from __future__ import annotations

import decimal
import io
import threading
import uuid
from collections import OrderedDict
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from pyarrow.fs import FileSystem, FileType
from pyiceberg.avro.codecs import AvroCompressionCodec
from pyiceberg.io import FileIO, InputFile, InputStream, OutputFile, OutputStream
from pyiceberg.manifest import DataFile as IcebergDataFile
from pyiceberg.manifest import (
    DataFileContent,
    FileFormat,
    ManifestContent,
    ManifestEntry,
    ManifestEntryStatus,
    ManifestFile,
    ManifestWriterV2,
    write_manifest_list,
)
from pyiceberg.partitioning import UNPARTITIONED_PARTITION_SPEC, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.typedef import Record
from pyiceberg.types import DecimalType, UUIDType

from api.iceberg.avro_reads import (
    ReadBudget,
    claimed_entries,
    manifest_entries,
    manifests_of,
    open_manifest_list,
)
from api.iceberg.bounds import encode_bound
from api.iceberg.errors import bad_request, commit_failed, unavailable
from catalog.column_types import NESTED_TYPES
from catalog.data.files import DataCommit, DataFile
from catalog.data.iceberg_identity import spark_snapshot_id
from catalog.data.table_files import (
    ReadDeadlineError,
    StoreUnavailableError,
    TableFileError,
    arrow_filesystem,
    file_status,
    remove_file,
    write_file,
)
from catalog.data.warehouse import folder_of, inside
from catalog.descriptors import ColumnDescriptor
from catalog.errors import ValidationError

AVRO_CODEC: AvroCompressionCodec = "deflate"

NO_EQUALITY_DELETES = (
    "this catalog takes position delete files, not equality delete files, and nothing was "
    "written: delete rows by position (Spark, Trino and DuckDB do), or copy-on-write"
)
"""Why a commit with equality delete files is refused, and what to do instead."""


@contextmanager
def _reading(what: str, location: str) -> Iterator[None]:
    """Refuse, with a 400 naming it, a file that is missing or is not what it should be.

    A file beyond a reading limit, or reached through a link, is refused with the limit's
    own message; reads that outlast the request's deadline answer 503 (nothing was written).
    A store that does not answer is a definite 409 ``CommitFailedException`` (nothing was
    written): Iceberg's clients send such a commit again themselves, where a 503 would leave
    them not knowing whether it landed.
    """
    try:
        yield
    except StoreUnavailableError as e:
        raise commit_failed(f"{e}; nothing was written: send the commit again") from e
    except ReadDeadlineError as e:
        raise unavailable(f"{e}; nothing was written: send the commit again") from e
    except TableFileError as e:
        raise bad_request(str(e)) from e
    except Exception as e:
        # A corrupt file fails anywhere in the reader (its header's JSON, its codec, the
        # decoder, the schema resolution), each with its own error: all mean "not readable".
        raise bad_request(f"{what} {location} cannot be read as an Iceberg {what}") from e


def budget_for(folder: str) -> ReadBudget:
    """Return the reading budget of one request's reads of files of the table at ``folder``."""
    return ReadBudget(stored_path(folder))


def stored_path(location: str) -> str:
    """Return the file or folder a location names, as the file seam takes it (``folder_of``).

    That is a local path (from a path or a ``file:`` URI) or ``s3://bucket/key``.

    Raises:
        IcebergError: BadRequestException for a location on another filesystem.
    """
    try:
        return folder_of(location)
    except ValidationError as e:
        raise bad_request(str(e)) from e


def relative_path(folder: str, location: str, what: str) -> str:
    """Return ``location`` relative to the table's ``folder`` (each a path or a URI).

    Raises:
        IcebergError: BadRequestException naming ``what`` when it is outside the folder.
    """
    folder = stored_path(folder)
    path = stored_path(location)
    if not inside(path, folder):
        raise bad_request(
            f"{what} {location} is outside the table's folder {folder}; this catalog records "
            "only files under the table's location"
        )
    return path[len(folder) + 1 :]


def _file(location: str) -> tuple[FileSystem, str]:
    return arrow_filesystem(stored_path(location))


class _StoreInput(InputFile):
    """A file of the warehouse, read (in a local folder or on S3)."""

    def __len__(self) -> int:
        files, path = _file(self.location)
        return int(files.get_file_info(path).size or 0)

    def exists(self) -> bool:
        """Return whether the file exists."""
        files, path = _file(self.location)
        return bool(files.get_file_info(path).type != FileType.NotFound)

    def open(self, seekable: bool = True) -> InputStream:
        """Open the file for reading."""
        files, path = _file(self.location)
        stream: InputStream = files.open_input_file(path)
        return stream


class _Written(io.BytesIO):
    """The bytes of a file being written: stored whole when closed."""

    def __init__(self, location: str, overwrite: bool) -> None:
        super().__init__()
        self.location, self.overwrite = location, overwrite

    def close(self) -> None:
        """Store the file (a reader sees all of it or none), then close."""
        if not self.closed:
            folder, _, name = stored_path(self.location).rpartition("/")
            if not write_file(folder, name, self.getvalue(), overwrite=self.overwrite):
                raise FileExistsError(f"{self.location} exists")
        super().close()


class _StoreOutput(OutputFile):
    """A file of the warehouse, written whole when its stream closes."""

    def __len__(self) -> int:
        return len(_StoreInput(self.location))

    def exists(self) -> bool:
        """Return whether the file exists."""
        return _StoreInput(self.location).exists()

    def to_input_file(self) -> InputFile:
        """Return the file, to read."""
        return _StoreInput(self.location)

    def create(self, overwrite: bool = False) -> OutputStream:
        """Create the file for writing; an existing one only with ``overwrite``."""
        if not overwrite and self.exists():
            raise FileExistsError(f"{self.location} exists")
        return _Written(self.location, overwrite)


class WarehouseIO(FileIO):
    """PyIceberg's file access, on the warehouse's local folder or S3 (``table_files``)."""

    def new_input(self, location: str) -> InputFile:
        """Return a file to read."""
        return _StoreInput(location)

    def new_output(self, location: str) -> OutputFile:
        """Return a file to write."""
        return _StoreOutput(location)

    def delete(self, location: str | InputFile | OutputFile) -> None:
        """Delete a file."""
        folder, _, name = stored_path(
            location if isinstance(location, str) else location.location
        ).rpartition("/")
        remove_file(folder, name)


_LISTS_KEPT = 512
"""How many manifest lists the server keeps read (a commit reads its parent's, which the
commit before read as its own)."""

_lists: OrderedDict[tuple[str, str, int, int], tuple[ManifestFile, ...]] = OrderedDict()
_lists_lock = threading.Lock()


def _manifests(budget: ReadBudget, manifest_list: str) -> list[ManifestFile]:
    """Return the manifests a manifest list names.

    Iceberg never rewrites a manifest list, so one decoded before is answered again while the
    file is the same one (its inode, size and modification time unchanged): it is still read
    (the read is the check that it is a regular file in the folder), not decoded again.
    """
    relative = relative_path(budget.folder, manifest_list, "manifest list")
    with _reading("manifest list", manifest_list):
        read = open_manifest_list(budget, relative, manifest_list)
        found = read.status
        key = (manifest_list, found.tag, found.size, found.mtime_ns)
        with _lists_lock:
            kept = _lists.get(key)
            if kept is not None:
                _lists.move_to_end(key)
                return list(kept)
        decoded = manifests_of(read)
        with _lists_lock:
            _lists[key] = decoded
            if len(_lists) > _LISTS_KEPT:
                _lists.popitem(last=False)
        return list(decoded)


def _still_there(budget: ReadBudget, manifest_list: str | None) -> bool:
    """Return whether ``manifest_list`` names a file of the folder (False: None or gone)."""
    if manifest_list is None:
        return False
    relative = relative_path(budget.folder, manifest_list, "manifest list")
    with _reading("manifest list", manifest_list):
        try:
            file_status(budget.folder, relative, "manifest list", manifest_list)
        except TableFileError as e:
            if e.missing:
                return False
            raise
    return True


def snapshot_change(
    folder: str,
    manifest_list: str,
    parent_list: str | None,
    held: set[str],
    snapshot_id: int,
) -> tuple[dict[str, IcebergDataFile], set[str]]:
    """Return the files snapshot ``snapshot_id`` adds to its parent's, and those it drops.

    ``held`` are the parent snapshot's files (the table's visible ones), ``parent_list`` its
    manifest list. A manifest never changes, so one both lists name holds the same files in
    both: only the manifests the snapshot does not share with its parent are read (for an
    append, the one it wrote), which keeps a commit's cost independent of the table's history.
    Without a parent list still on disk, every manifest of the snapshot is read. Every file is
    read within the limits of ``api.iceberg.avro_reads``.

    Raises:
        IcebergError: BadRequestException for a manifest, list or data file outside the
            table's folder, a missing one, one beyond a reading limit, equality delete files,
            or a file not in Parquet; ServiceUnavailableException when the reads outlast
            their deadline.
    """
    budget = budget_for(folder)
    listed = {m.manifest_path: m for m in _manifests(budget, manifest_list)}
    if not _still_there(budget, parent_list):
        live = _live(budget, list(listed.values()), snapshot_id)
        return {p: f for p, f in live.items() if p not in held}, held - live.keys()
    assert parent_list is not None
    before = {m.manifest_path: m for m in _manifests(budget, parent_list)}
    fresh_manifests = [m for p, m in listed.items() if p not in before]
    gone_manifests = [m for p, m in before.items() if p not in listed]
    with _reading("manifest", manifest_list):
        claimed = sum(map(claimed_entries, fresh_manifests + gone_manifests))
        budget.check_claim(claimed, f"snapshot {snapshot_id}")
    fresh = _live(budget, fresh_manifests, snapshot_id)
    gone = _live(budget, gone_manifests, snapshot_id)
    added = {p: f for p, f in fresh.items() if p not in held}
    return added, (held & gone.keys()) - fresh.keys()


def _entries(budget: ReadBudget, manifest: ManifestFile) -> list[ManifestEntry]:
    """Return a manifest's live entries, read within the limits (a 400 or 503 otherwise)."""
    relative = relative_path(budget.folder, manifest.manifest_path, "manifest")
    with _reading("manifest", manifest.manifest_path):
        return manifest_entries(budget, relative, manifest)


def _live(
    budget: ReadBudget, manifests: Sequence[ManifestFile], snapshot_id: int
) -> dict[str, IcebergDataFile]:
    """Return the files ``manifests`` hold (not deleted), by path relative to the folder.

    Data files and position delete files alike: a delete manifest lists only delete files,
    a data manifest only data files.
    """
    found: dict[str, IcebergDataFile] = {}
    for manifest in manifests:
        deletes = manifest.content == ManifestContent.DELETES
        for entry in _entries(budget, manifest):
            data_file = entry.data_file
            if data_file.content == DataFileContent.EQUALITY_DELETES:
                raise bad_request(
                    f"snapshot {snapshot_id} has equality delete file {data_file.file_path}: "
                    + NO_EQUALITY_DELETES
                )
            if (data_file.content == DataFileContent.POSITION_DELETES) != deletes:
                kind = "delete" if deletes else "data"
                raise bad_request(
                    f"{kind} manifest {manifest.manifest_path} of snapshot {snapshot_id} lists "
                    f"{data_file.file_path}, which is not a {kind} file"
                )
            if data_file.file_format != FileFormat.PARQUET:
                raise bad_request(
                    f"file {data_file.file_path} is {data_file.file_format.value}: this "
                    "catalog's tables hold Parquet files (data and position deletes; no "
                    "deletion vectors)"
                )
            found[relative_path(budget.folder, data_file.file_path, "data file")] = data_file
    return found


def check_present(folder: str, paths: Sequence[str]) -> None:
    """Refuse data files (by path relative to ``folder``) that are not regular files there.

    Each is reached from the folder through no link (``catalog.data.table_files``).

    Raises:
        IcebergError: BadRequestException naming the first that is missing, reached
            through a link, or not a regular file.
    """
    stored = stored_path(folder)
    for path in paths:
        with _reading("data file", f"{folder}/{path}"):
            file_status(stored, path, "data file", f"{folder}/{path}")


@dataclass(frozen=True)
class _Naming:
    """Where a commit's manifests go: ``<location>/metadata/<prefix>-<suffix>.avro``."""

    location: str
    prefix: str
    snapshot_id: int

    def path(self, suffix: str) -> str:
        return f"{self.location}/metadata/{self.prefix}-{suffix}.avro"


def _without(
    naming: _Naming,
    manifests: Sequence[ManifestFile],
    removed: set[str],
    specs: Mapping[int, PartitionSpec],
    schema: Schema,
) -> list[ManifestFile]:
    """Return ``manifests`` without the files ``removed`` names (paths in the table's folder).

    A manifest that lists one is written again with its other files, as existing ones that
    keep their sequence numbers; one left with none is dropped.
    """
    io = WarehouseIO()
    budget = budget_for(naming.location)
    kept: list[ManifestFile] = []
    for n, manifest in enumerate(manifests):
        entries = _entries(budget, manifest)
        live = [
            e
            for e in entries
            if relative_path(naming.location, e.data_file.file_path, "file") not in removed
        ]
        if len(live) == len(entries):
            kept.append(manifest)
            continue
        if not live:
            continue
        spec = specs.get(manifest.partition_spec_id)
        if spec is None:
            raise bad_request(
                f"manifest {manifest.manifest_path} has partition spec "
                f"{manifest.partition_spec_id}, which the table does not have"
            )
        writer_of = (
            _DeletesWriter if manifest.content == ManifestContent.DELETES else ManifestWriterV2
        )
        output = io.new_output(naming.path(f"c{n}"))
        with writer_of(spec, schema, output, naming.snapshot_id, AVRO_CODEC) as writer:
            for entry in live:
                writer.add(
                    ManifestEntry.from_args(
                        status=ManifestEntryStatus.EXISTING,
                        snapshot_id=entry.snapshot_id,
                        sequence_number=entry.sequence_number,
                        file_sequence_number=entry.file_sequence_number,
                        data_file=entry.data_file,
                    )
                )
        kept.append(writer.to_manifest_file())
    return kept


class _DeletesWriter(ManifestWriterV2):
    """A writer of a delete manifest (PyIceberg writes data manifests only)."""

    def content(self) -> ManifestContent:
        return ManifestContent.DELETES

    @property
    def _meta(self) -> dict[str, str]:
        return {**super()._meta, "content": "deletes"}


def spark_manifest_list(location: str, snapshot_id: int, seq: int) -> str:
    """Return where the manifest list of a Spark source commit is written."""
    return f"{location}/metadata/snap-{snapshot_id}-catalog-{seq}.avro"


def _spec(specs: Mapping[int, PartitionSpec], spec_id: int | None) -> PartitionSpec:
    """Return the spec a Spark source file was written for (None: the unpartitioned one)."""
    if spec_id is None:
        return UNPARTITIONED_PARTITION_SPEC
    spec = specs.get(spec_id)
    if spec is None:
        raise bad_request(
            f"a file of the catalog's Spark source was written for partition spec {spec_id}, "
            "which the table does not have"
        )
    return spec


def _partition(file: DataFile, spec: PartitionSpec, schema: Schema) -> Record:
    """Return a file's partition as its manifest holds it (Iceberg's value of each field)."""
    if file.iceberg_partition is None or not spec.fields:
        return Record()
    values: list[object] = []
    result = spec.partition_type(schema)
    for field, value in zip(result.fields, file.iceberg_partition.values, strict=True):
        if value is not None and isinstance(field.field_type, DecimalType):
            values.append(decimal.Decimal(str(value)))
        elif value is not None and isinstance(field.field_type, UUIDType):
            values.append(uuid.UUID(str(value)))
        else:
            values.append(value)
    return Record(*values)


def _data_file(
    location: str,
    written: DataFile,
    columns: Mapping[int, ColumnDescriptor],
    partition: Record | None = None,
) -> IcebergDataFile:
    stats = [
        s
        for s in written.stats or ()
        if s.column_id in columns and columns[s.column_id].type not in NESTED_TYPES
    ]  # Iceberg's metrics are of primitive fields: a nested column's are not written
    lower, upper = {}, {}
    for s in stats:
        column = columns[s.column_id]
        low = None if s.lower is None else encode_bound(column, s.lower)
        high = None if s.upper is None else encode_bound(column, s.upper)
        if low is not None:
            lower[s.column_id] = low
        if high is not None:
            upper[s.column_id] = high
    return IcebergDataFile.from_args(
        content=DataFileContent.POSITION_DELETES if written.deletes else DataFileContent.DATA,
        file_path=f"{location}/{written.path}",
        file_format=FileFormat.PARQUET,
        partition=Record() if partition is None else partition,
        record_count=written.rows,
        file_size_in_bytes=written.size,
        column_sizes={},
        value_counts={s.column_id: written.rows for s in stats},
        null_value_counts={s.column_id: s.nulls for s in stats},
        nan_value_counts={},
        lower_bounds=lower,
        upper_bounds=upper,
    )


def write_manifests(
    location: str,
    schema: Schema,
    columns: Sequence[ColumnDescriptor],
    commit: DataCommit,
    parent: tuple[int, str] | None,
    sequence_number: int,
    specs: Mapping[int, PartitionSpec],
) -> str:
    """Write the manifest and manifest list of a Spark source commit; return the list's path.

    The list holds the parent snapshot's manifests that still hold files (none after an
    overwrite; without the files the commit removes) and new manifests of the commit's files:
    one per partition spec its files were written for (each file with its Iceberg partition;
    the unpartitioned spec for files written without one), and one of its position delete
    files (a merged commit's). Written once: when the list
    exists, nothing is written. The manifests get fresh names and the list is written whole
    under its fixed one, so a concurrent writer (another node) never leaves a half-written list.

    Args:
        location: the table's location.
        schema: the table's schema, as Iceberg has it.
        columns: the table's columns (the bounds are written as their types).
        commit: the commit.
        parent: the snapshot id and manifest list of the commit before it, if any.
        sequence_number: the snapshot's sequence number.
        specs: the table's partition specs, by id (a manifest carried from the parent is
            written again with its own, without the files the commit removes).

    Raises:
        IcebergError: BadRequestException when the parent's manifest list cannot be read.
    """
    snapshot_id = spark_snapshot_id(commit.table_id, commit.seq)
    target = spark_manifest_list(location, snapshot_id, commit.seq)
    if _StoreInput(target).exists():
        return target
    io = WarehouseIO()
    fresh = uuid.uuid4().hex
    naming = _Naming(location, f"catalog-{commit.seq}-{fresh}", snapshot_id)
    carried: list[ManifestFile] = []
    if parent is not None and commit.mode == "append":
        carried = [
            m
            for m in _manifests(budget_for(location), parent[1])
            if m.has_added_files() or m.has_existing_files()
        ]
        if commit.removed:
            carried = _without(naming, carried, set(commit.removed), specs, schema)
    by_id = {c.id: c for c in columns}
    plan: list[tuple[list[DataFile], type[ManifestWriterV2], PartitionSpec]] = []
    by_spec: dict[int | None, list[DataFile]] = {}
    for file in commit.files:
        if not file.deletes:
            where = file.iceberg_partition
            by_spec.setdefault(None if where is None else where.spec_id, []).append(file)
    for spec_id, files in sorted(
        by_spec.items(), key=lambda item: -1 if item[0] is None else item[0]
    ):
        plan.append((files, ManifestWriterV2, _spec(specs, spec_id)))
    if not plan:
        plan.append(([], ManifestWriterV2, UNPARTITIONED_PARTITION_SPEC))
    deletes = [f for f in commit.files if f.deletes]  # a merged commit's, of engines' deletes
    if deletes:
        plan.append((deletes, _DeletesWriter, UNPARTITIONED_PARTITION_SPEC))
    written: list[ManifestFile] = []
    for n, (files, writer_of, spec) in enumerate(plan):
        output = io.new_output(naming.path(f"m{n}"))
        with writer_of(spec, schema, output, snapshot_id, AVRO_CODEC) as w:
            for file in files:
                partition = _partition(file, spec, schema)
                w.add(
                    ManifestEntry.from_args(
                        status=ManifestEntryStatus.ADDED,
                        snapshot_id=snapshot_id,
                        data_file=_data_file(location, file, by_id, partition),
                    )
                )
        written.append(w.to_manifest_file())
    with write_manifest_list(
        format_version=2,
        output_file=io.new_output(target),
        snapshot_id=snapshot_id,
        parent_snapshot_id=None if parent is None else parent[0],
        sequence_number=sequence_number,
        avro_compression=AVRO_CODEC,
    ) as list_writer:
        list_writer.add_manifests([*carried, *written])
    return target

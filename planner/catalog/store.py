"""Price snapshots on disk: versioned, immutable directories with a manifest.

Layout of one snapshot (``pricing_cache/<snapshot_id>/``)::

    manifest.json          schema version, snapshot id, created_at, and per provider:
                           file, rows, sha256, as_of (oldest row), as_of_newest (newest row),
                           as_of_basis, source, notes
    offers-aws.csv         the common offer table (planner.schema), one file per provider
    offers-gcp.csv ...

Writes are atomic: files go to a hidden temporary directory beside the target, are fsynced, and the
directory is renamed into place (``os.replace``) under an exclusive file lock, so a crash mid-write
leaves every earlier snapshot intact and a half-written one invisible.  Reads verify checksums.

What a killed writer leaves behind is named so it can be found: temporary snapshot directories
start with ``.tmp-`` (:data:`TMP_PREFIX`) and write probes with ``.write-check-``
(:data:`PROBE_PREFIX`).  A temporary directory only exists while its writer holds the store's lock,
so whoever holds that lock may remove any it finds (:func:`remove_leftovers`): its writer is dead.

The lock is a :class:`filelock.FileLock` (``flock`` on POSIX, ``msvcrt.locking`` on Windows), so
importing the planner needs no POSIX-only module.
"""

from __future__ import annotations

import contextlib
import csv
import errno
import hashlib
import io
import json
import logging
import os
import shutil
import stat
import tempfile
import warnings
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import MISSING, asdict, dataclass, field, fields
from datetime import date, datetime
from pathlib import Path
from typing import Any

import pandas as pd

import planner
from planner import clock
from planner.config.datadir import data_dir_setting
from planner.config.yamlfile import SAVE_AS_UTF8, not_utf8, read_bounded, wide_unicode
from planner.errors import (
    DataDirError,
    NotASnapshotError,
    OfferValidationError,
    SnapshotError,
    shown_path,
)
from planner.schema import COLUMN_NAMES, SCHEMA_VERSION, validate_offers
from planner.units import MIN_USD_PER_GPU_HOUR

log = logging.getLogger(__name__)

MANIFEST = "manifest.json"
LOCK = ".lock"
# Names of what a writer makes beside the snapshots and removes when it is done; a killed writer
# leaves them behind, and the next writer (holding LOCK) removes them.
TMP_PREFIX = ".tmp-"
PROBE_PREFIX = ".write-check-"


@dataclass(frozen=True)
class ProviderEntry:
    """One provider's part of a snapshot.

    A refresh of some regions carries the other regions' rows over with their own dates, so a part
    spans a range of as-of dates: ``as_of`` is the oldest (staleness warnings stay conservative),
    ``as_of_newest`` the newest.  Manifests written before ``as_of_newest`` existed read as a
    single date (``as_of_newest == as_of``).
    """

    provider: str
    file: str
    rows: int
    sha256: str
    as_of: str
    source: str
    as_of_basis: str = "fetched"  # fetched | estimated (see notes)
    notes: str = ""
    as_of_newest: str = ""  # "" (an older manifest): the same as as_of

    def __post_init__(self) -> None:
        if not self.as_of_newest:
            object.__setattr__(self, "as_of_newest", self.as_of)


@dataclass(frozen=True)
class Manifest:
    """A snapshot folder's ``manifest.json``: its id, when it was made, the schema it was
    written with and, per provider, the offers file with its checksum and provenance."""

    snapshot_id: str
    created_at: str
    schema_version: int
    providers: tuple[ProviderEntry, ...]
    notes: str = ""

    def to_json(self) -> str:
        data = asdict(self)
        data["providers"] = [asdict(p) for p in self.providers]
        return json.dumps(data, indent=2) + "\n"

    @classmethod
    def from_json(cls, text: str, where: str) -> Manifest:
        try:
            data = json.loads(text)
            if not isinstance(data, dict):
                raise TypeError(f"a JSON {type(data).__name__} where an object belongs")
            for key in _MANIFEST_KEYS:
                if key not in data:
                    raise KeyError(f"no {key!r} key")
            if not isinstance(data["providers"], list):
                raise TypeError("'providers' is not a list")
            version = data["schema_version"]
            if isinstance(version, bool) or not isinstance(version, int):
                raise TypeError(f"schema_version {version!r} is not a whole number")
            # was: any value taken as text, so snapshot_id 7 or created_at "yesterday" loaded, and
            # the newest snapshot was picked by comparing that text with real times
            for key in ("snapshot_id", "created_at"):
                if not isinstance(data[key], str) or not data[key].strip():
                    raise TypeError(f"{key} is not text: {data[key]!r}")
            try:
                datetime.fromisoformat(data["created_at"])
            except ValueError:
                raise ValueError(
                    f"created_at {data['created_at']!r} is not a time like "
                    "2026-01-01T00:00:00+00:00"
                ) from None
            entries = tuple(_entry(p, i) for i, p in enumerate(data["providers"]))
            for i, entry in enumerate(entries):
                if any(earlier.provider == entry.provider for earlier in entries[:i]):
                    # was: both loaded, each of the provider's offers listed twice
                    raise ValueError(f"providers[{i}]: provider {entry.provider!r} is listed twice")
            return cls(
                snapshot_id=str(data["snapshot_id"]),
                created_at=str(data["created_at"]),
                schema_version=version,
                providers=entries,
                notes=str(data.get("notes", "")),
            )
        except (ValueError, KeyError, TypeError) as e:
            # a KeyError's text is its repr ("'no 'sha256' key'"): its argument reads better
            reason = e.args[0] if isinstance(e, KeyError) and e.args else e
            raise SnapshotError(
                f"{where}: unreadable manifest ({reason})", hint=_DAMAGED_SNAPSHOT
            ) from e


# The keys every manifest has (notes may be left out).
_MANIFEST_KEYS = ("snapshot_id", "created_at", "schema_version", "providers")
# What to do about a snapshot whose manifest cannot be read.
_DAMAGED_SNAPSHOT = (
    "the snapshot is damaged (a hand edit or a torn copy): `planner prices refresh` writes a new "
    "one; name another snapshot, or none to use the newest readable one"
)
# A provider entry's keys without a default: an entry without one cannot be read.
_ENTRY_KEYS = tuple(f.name for f in fields(ProviderEntry) if f.default is MISSING)


def _entry(data: Any, index: int = 0) -> ProviderEntry:
    """A manifest's provider entry; keys this version does not know (a newer writer's) are ignored.

    Raises TypeError / ValueError / KeyError for an entry that is not one (a hand-edited or
    corrupt manifest), which :meth:`Manifest.from_json` reports as an unreadable manifest.
    """
    where = f"providers[{index}]"
    if not isinstance(data, Mapping):
        raise TypeError(f"{where} is {type(data).__name__}, not an object")
    for key in _ENTRY_KEYS:
        if key not in data:
            raise KeyError(f"{where} has no {key!r} key")
    known = {f.name for f in fields(ProviderEntry)}
    entry = ProviderEntry(**{k: v for k, v in data.items() if k in known})
    for key in ("provider", "file", "sha256", "as_of", "as_of_newest", "source"):
        if not isinstance(getattr(entry, key), str):
            raise TypeError(f"{where}.{key} is not text: {getattr(entry, key)!r}")
    for key in ("as_of", "as_of_newest"):
        try:
            date.fromisoformat(getattr(entry, key))
        except ValueError:
            raise ValueError(
                f"{where}.{key} {getattr(entry, key)!r} is not a date like 2026-01-01"
            ) from None
    if entry.as_of_newest < entry.as_of:
        raise ValueError(
            f"{where}.as_of_newest {entry.as_of_newest!r} is before its as_of {entry.as_of!r}"
        )
    if isinstance(entry.rows, bool) or not isinstance(entry.rows, int) or entry.rows < 0:
        # was: rows "595" or -1 accepted
        raise TypeError(f"{where}.rows {entry.rows!r} is not a whole number of rows")
    if Path(entry.file).name != entry.file or entry.file in ("", ".", ".."):
        raise ValueError(f"{where}.file {entry.file!r} is not a file name")
    return entry


@dataclass(frozen=True)
class Snapshot:
    """A loaded snapshot: the manifest and the validated offers of every provider in it."""

    path: Path
    manifest: Manifest
    offers: pd.DataFrame = field(repr=False)


def bundled_snapshot_root() -> Path:
    """Where the bundled snapshots live: the source checkout's ``pricing_cache/`` or the wheel copy."""
    package = Path(planner.__file__).resolve().parent
    source_tree = package.parent / "pricing_cache"
    if source_tree.is_dir():
        return source_tree
    return package / "_bundled" / "pricing_cache"


def user_snapshot_root() -> Path:
    """Where ``planner prices refresh`` publishes snapshots (``$PLANNER_DATA_DIR`` overrides)."""
    override = data_dir_setting()
    if override is not None:
        return override / "snapshots"
    import platformdirs

    return Path(platformdirs.user_data_dir("planner")) / "snapshots"


def default_roots() -> tuple[Path, ...]:
    """Snapshot roots searched by default: the user's refreshed snapshots, then the bundled ones."""
    return (user_snapshot_root(), bundled_snapshot_root())


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def offers_to_csv(df: pd.DataFrame) -> bytes:
    """The canonical CSV bytes of an offers table (stable column order, LF line ends)."""
    buf = io.StringIO()
    df[list(COLUMN_NAMES)].to_csv(buf, index=False, lineterminator="\n", float_format="%.10g")
    return buf.getvalue().encode("utf-8")


@contextlib.contextmanager
def locked(root: Path, name: str = LOCK) -> Iterator[None]:
    """Hold the exclusive lock file ``name`` in ``root`` (blocks while another holds it).

    Each call takes its own lock object, so two threads of one process exclude each other just as
    two processes do.  A folder where the lock cannot be made (read-only, full, no permission) is
    a SnapshotError saying what to do.
    """
    from filelock import FileLock  # ~8 ms to import: only where a snapshot is written

    lock = FileLock(root / name)
    try:
        root.mkdir(parents=True, exist_ok=True)
        lock.acquire()
    except OSError as e:
        raise _write_failed(root, e) from e
    try:
        yield
    finally:
        lock.release()


def remove_leftovers(root: Path) -> list[str]:
    """Remove what killed writers left in ``root`` (temporary snapshot directories, write probes);
    returns their names.

    Takes the store's lock: a temporary directory exists only while its writer holds that lock, so
    one found while holding it belongs to a dead process.  A write probe is made without the lock
    (:func:`ensure_writable`), which tolerates its probe being removed under it.
    """
    if not root.is_dir():
        return []
    with locked(root):
        return _sweep(root)


def _sweep(root: Path) -> list[str]:
    """:func:`remove_leftovers` for a caller that holds the store's lock."""
    removed = []
    for path in root.iterdir():
        if path.name.startswith(TMP_PREFIX) and path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        elif path.name.startswith(PROBE_PREFIX) and path.is_file():
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
        else:
            continue
        removed.append(path.name)
    if removed:
        log.info("removed %d leftover(s) of an interrupted write in %s", len(removed), root)
    return removed


def _fsync_dir(path: Path) -> None:
    """Flush a directory's entries (a rename) to disk.  Windows cannot open a directory for this;
    NTFS journals the rename itself."""
    if os.name == "nt":
        return
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_snapshot(
    root: Path,
    frames: Mapping[str, pd.DataFrame],
    *,
    snapshot_id: str | None = None,
    sources: Mapping[str, str] | None = None,
    as_of_basis: Mapping[str, str] | None = None,
    provider_notes: Mapping[str, str] | None = None,
    notes: str = "",
    now: datetime | None = None,
) -> Path:
    """Validate ``frames`` (provider -> offers) and publish them atomically as a new snapshot.

    Returns the snapshot's directory.  Raises SnapshotError if the id exists (snapshots are
    immutable) or validation fails; in either case nothing is published.
    """
    now = now or clock.utc_now()
    snapshot_id = snapshot_id or now.strftime("%Y-%m-%dT%H%M%SZ")
    entries: list[ProviderEntry] = []
    payloads: dict[str, bytes] = {}
    for provider, df in sorted(frames.items()):
        clean = validate_offers(df, source=f"{provider} offers")
        if (clean["provider"] != provider).any():
            raise SnapshotError(f"offers for {provider!r} contain rows of other providers")
        data = offers_to_csv(clean)
        entry = _provider_entry(
            provider,
            clean,
            data,
            today=now.date().isoformat(),
            source=(sources or {}).get(provider),
            as_of_basis=(as_of_basis or {}).get(provider, "fetched"),
            notes=(provider_notes or {}).get(provider, ""),
        )
        payloads[entry.file] = data
        entries.append(entry)
    manifest = Manifest(
        snapshot_id=snapshot_id,
        created_at=now.isoformat(timespec="seconds"),
        schema_version=SCHEMA_VERSION,
        providers=tuple(entries),
        notes=notes,
    )
    target = _publish(root, snapshot_id, {**payloads, MANIFEST: manifest.to_json().encode()})
    log.info("published snapshot %s (%d providers)", target, len(entries))
    return target


def _provider_entry(
    provider: str,
    clean: pd.DataFrame,
    data: bytes,
    *,
    today: str,
    source: str | None,
    as_of_basis: str,
    notes: str,
) -> ProviderEntry:
    """The manifest entry of one provider's validated offers ``clean`` (written as ``data``): its
    as-of range (``today`` for an empty table) and, unless given, its rows' distinct sources."""
    as_ofs = sorted(clean["as_of"].unique())
    return ProviderEntry(
        provider=provider,
        file=f"offers-{provider}.csv",
        rows=len(clean),
        sha256=_sha256(data),
        as_of=as_ofs[0] if as_ofs else today,
        as_of_newest=as_ofs[-1] if as_ofs else today,
        source=source if source is not None else "; ".join(sorted(clean["source"].unique())),
        as_of_basis=as_of_basis,
        notes=notes,
    )


def _publish(root: Path, snapshot_id: str, files: Mapping[str, bytes]) -> Path:
    """Write ``files`` into a new snapshot directory atomically, under the store's lock: a hidden
    temporary directory, every file fsynced, then one ``os.replace``.  A failure removes the
    temporary directory and leaves ``root`` as it was; a file-system failure (full, read-only,
    no permission) is a SnapshotError saying what to do."""
    try:
        with locked(root):
            target = root / snapshot_id
            if target.exists():
                raise SnapshotError(
                    f"snapshot {snapshot_id} already exists in {root}; snapshots are immutable"
                )
            _sweep(root)  # a killed writer's temporary directory: its lock died with it
            tmp = Path(tempfile.mkdtemp(prefix=f"{TMP_PREFIX}{snapshot_id}-", dir=root))
            try:
                for name, data in files.items():
                    with open(tmp / name, "wb") as fh:
                        fh.write(data)
                        fh.flush()
                        os.fsync(fh.fileno())
                os.chmod(tmp, 0o755)  # mkdtemp makes it private; snapshots are shared read-only
                _fsync_dir(tmp)
                os.replace(tmp, target)
                _fsync_dir(root)
            except BaseException:
                shutil.rmtree(tmp, ignore_errors=True)
                raise
    except OSError as e:
        raise _write_failed(root, e) from e
    return target


def ensure_writable(root: Path) -> None:
    """Refuse early (SnapshotError with the fix) when snapshots cannot be written into ``root``:
    a refresh checks this before it spends minutes fetching prices."""
    try:
        root.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=PROBE_PREFIX, dir=root)
        os.close(fd)
        with contextlib.suppress(FileNotFoundError):  # removed as a leftover by another writer
            os.unlink(probe)
    except OSError as e:
        raise _write_failed(root, e) from e


def _write_failed(root: Path, e: OSError) -> SnapshotError:
    """A failed snapshot write in the user's words: where, why, and what to do."""
    hints = {
        errno.ENOSPC: "free some space on that disk, or point PLANNER_DATA_DIR at another one",
        errno.EDQUOT: "free some space within your quota, or point PLANNER_DATA_DIR elsewhere",
        errno.EROFS: "point PLANNER_DATA_DIR at a writable folder",
        errno.EACCES: "point PLANNER_DATA_DIR at a folder you can write to",
        errno.EPERM: "point PLANNER_DATA_DIR at a folder you can write to",
        errno.ENOTDIR: "part of that path is a file, not a folder: point PLANNER_DATA_DIR at a "
        "folder",
        errno.ENAMETOOLONG: "point PLANNER_DATA_DIR at a shorter path",
    }
    reason = {errno.ENOSPC: "no space left on the disk", errno.EROFS: "the disk is read-only"}
    code = e.errno or 0
    # a path that cannot be a folder is the setting's fault (bad input, exit 2); a full or
    # read-only disk, or a permission, the machine's
    return (DataDirError if code in _SETTING_ERRNOS else SnapshotError)(
        f"cannot write a snapshot in {shown_path(root)}: {reason.get(code, e.strerror or str(e))}; "
        "the snapshots already there are unchanged",
        hint=hints.get(code, "check the folder, or point PLANNER_DATA_DIR at another one"),
    )


def read_manifest(path: Path) -> Manifest:
    try:
        text = (path / MANIFEST).read_text(encoding="utf-8")
    except OSError as e:
        # no manifest at all: a folder that is not a snapshot (bad input where the user named it;
        # a stored one found so is skipped as any broken snapshot is); unreadable: the machine's
        missing = e.errno in (errno.ENOENT, errno.ENOTDIR, errno.EISDIR)
        raise (NotASnapshotError if missing else SnapshotError)(
            f"{path}: no readable {MANIFEST} ({e.strerror}); this is not a price snapshot folder",
            # (was "or leave the option out", said to prices diff's OLD and NEW too)
            hint="name a snapshot by its id (`planner prices status` lists them), or a folder "
            "holding manifest.json and offers-*.csv",
        ) from e
    except UnicodeDecodeError as e:
        raise SnapshotError(f"{path / MANIFEST}: unreadable manifest (not UTF-8 text)") from e
    return Manifest.from_json(text, str(path / MANIFEST))


def load_snapshot(
    path: Path, *, providers: Sequence[str] | None = None, verify: bool = True
) -> Snapshot:
    """Load (and by default checksum-verify) one snapshot directory."""
    manifest = read_manifest(path)
    if manifest.schema_version > SCHEMA_VERSION:
        raise SnapshotError(
            f"{path}: schema version {manifest.schema_version} is newer than this planner ({SCHEMA_VERSION})",
            hint="upgrade planner",
        )
    parts: list[tuple[str, pd.DataFrame]] = []
    for entry in manifest.providers:
        if providers is not None and entry.provider not in providers:
            continue
        file = path / entry.file
        try:
            data = file.read_bytes()
        except OSError as e:
            # was: "cannot read (No such file or directory)" and no fix
            raise SnapshotError(
                f"{file}: cannot read ({e.strerror}); the snapshot's manifest.json lists it as "
                f"{entry.provider}'s {entry.rows:,} offers",
                hint="restore the file from where the snapshot came from, use another snapshot "
                "(or leave the option out for the newest), or fetch the prices afresh: planner "
                f"prices refresh --provider {entry.provider}",
            ) from e
        if verify and _sha256(data) != entry.sha256:
            raise SnapshotError(
                f"{file}: checksum mismatch; the snapshot is corrupt", hint="refresh prices"
            )
        parts.append((str(file), _parse_offers_csv(io.BytesIO(data), str(file))))
    return Snapshot(path=path, manifest=manifest, offers=_validated_parts(parts))


def _validated_parts(parts: Sequence[tuple[str, pd.DataFrame]]) -> pd.DataFrame:
    """The snapshot's files (source, raw table) as one validated table.

    Files with the same columns (every file a snapshot writes) are validated as one table: the
    checks work on whole columns, so one pass over the whole snapshot costs about what one pass
    over a single file does.  Should that pass fail (a file edited by hand, or a check newer than
    the snapshot), each file is validated on its own, so that the error names the file and row.
    """
    if not parts:
        return validate_offers(pd.DataFrame(columns=COLUMN_NAMES))
    if len({tuple(raw.columns) for _, raw in parts}) == 1:
        try:
            return validate_offers(pd.concat([raw for _, raw in parts], ignore_index=True))
        except OfferValidationError:
            pass  # found again below, in its own file
    frames = [validate_offers(raw, source=source) for source, raw in parts]
    return pd.concat(frames, ignore_index=True)


# A private price list with every region of every provider is ~100k rows, ~40 MB; the bundled
# snapshot's files are a few hundred KB.  Beyond this it is the wrong file.
MAX_OFFERS_CSV_BYTES = 64 * 2**20


def read_offers_csv(src: str | Path | io.BytesIO, *, source: str | None = None) -> pd.DataFrame:
    """Read and validate an offers CSV (a snapshot file or a user's private price list)."""
    where = source or str(src)
    if not isinstance(src, io.BytesIO):  # a user's file or pipe: bounded, errors with a fix
        data = read_bounded(
            Path(src),
            limit_bytes=MAX_OFFERS_CSV_BYTES,
            what="price list (CSV)",
            hint="pass the path of a .csv file",
        )
        src = io.BytesIO(_checked_text(data, where))
        raw = _parse_offers_csv(src, where, users=True)
        if raw.empty and set(raw.columns) & set(COLUMN_NAMES):
            raise OfferValidationError(
                "has a header row but no offers", file=where, hint=_CSV_TEMPLATE_HINT
            )
        offers = validate_offers(raw, source=where)
        _check_users_offers(offers, where)
        return offers
    return validate_offers(_parse_offers_csv(src, where), source=where)


def _check_users_offers(offers: pd.DataFrame, where: str) -> None:
    """What a user's price list states that the other inputs refuse, named by row and column
    (row 2 is the first offer): a price of 0, or under :data:`MIN_USD_PER_GPU_HOUR` a GPU (was a
    $0.00 plan, where a refresh's sanity gates refuse one), a spot interruption rate under 1% (a
    fraction typed into a percent column, as the
    CLI's --max-interruption refuses), and NVLink or NVSwitch on a GPU that has none (a hardware
    file and a Topology refuse it)."""
    from planner.gpu_specs import load_gpu_catalog
    from planner.schema import PRICE_COLUMNS

    def row(i: int) -> int:
        return int(i) + 2

    for column in PRICE_COLUMNS.values():
        if column not in offers:
            continue
        zero = offers.index[offers[column].fillna(-1.0) == 0.0]
        if len(zero):
            raise OfferValidationError(
                f"a price of 0 ({offers.loc[zero[0], 'instance_type']}): an offer costs "
                "something an hour",
                file=where,
                key_path=f"row {row(zero[0])}, column {column!r}",
                hint="give the price an hour, or leave the cell empty where the option is not "
                "offered",
            )
        per_gpu = offers[column] / offers["gpu_count"].clip(lower=1)
        tiny = offers.index[(per_gpu > 0) & (per_gpu < MIN_USD_PER_GPU_HOUR)]
        if len(tiny):
            # was: 8 x H100 at 0.0001 USD an hour, a "$0.00" plan
            i = tiny[0]
            raise OfferValidationError(
                f"{offers.loc[i, column]:g} USD an hour for {int(offers.loc[i, 'gpu_count'])} x "
                f"{offers.loc[i, 'gpu_model']} ({offers.loc[i, 'instance_type']}) is "
                f"{per_gpu.loc[i]:.2g} USD a GPU-hour, under {MIN_USD_PER_GPU_HOUR:g}: below the "
                "power a GPU draws",
                file=where,
                key_path=f"row {row(i)}, column {column!r}",
                hint="give the whole instance's price an hour in USD (a price a second x 3,600; "
                "a price a month / 730)",
            )
    _warn_above_on_demand(offers, where)
    if "spot_interruption_pct" in offers:
        pct = offers["spot_interruption_pct"]
        fraction = offers.index[(pct > 0) & (pct < 1)]
        if len(fraction):
            value = float(pct.loc[fraction[0]])
            raise OfferValidationError(
                f"{value:g}% a month looks like a fraction in a percent column",
                file=where,
                key_path=f"row {row(fraction[0])}, column 'spot_interruption_pct'",
                hint=f"did you mean {value * 100:g} ({value * 100:g}% a month)? the column "
                "takes a percentage, as AWS's Spot Instance Advisor gives it (5 for <5%)",
            )
    catalog = load_gpu_catalog()
    linked = offers["interconnect"].isin(["nvlink", "nvswitch"]) & (offers["gpu_count"] > 1)
    for i in offers.index[linked]:
        gpu = catalog.get(str(offers.loc[i, "gpu_model"]))
        if gpu is not None and not gpu.direct_link:
            raise OfferValidationError(
                f"the {gpu.name} has no NVLink ({gpu.gpu_link or 'no GPU link'}); its GPUs talk "
                f"over PCIe, so {offers.loc[i, 'interconnect']} cannot wire them",
                file=where,
                key_path=f"row {row(i)}, column 'interconnect'",
                hint="interconnect: pcie, or a GPU with NVLink (planner gpus shows each GPU's link)",
            )


def _warn_above_on_demand(offers: pd.DataFrame, where: str) -> None:
    """A warning for each price of a user's list above the same row's on-demand price: spot and
    commitments are discounts, so such a price is a slip (a price a month, a column swapped) or
    one no plan will choose (was: spot at 40 USD beside on-demand at 31.92, without a word)."""
    from planner.schema import PRICE_COLUMNS, PurchaseOption

    on_demand = PRICE_COLUMNS[PurchaseOption.ON_DEMAND]
    if on_demand not in offers:
        return
    for option, column in PRICE_COLUMNS.items():
        if option is PurchaseOption.ON_DEMAND or column not in offers:
            continue
        above = offers.index[offers[column] > offers[on_demand]]
        for i in above[:3]:
            log.warning(
                "%s: row %d, column %r: %s is %g USD an hour, above its on-demand %g: %s is a "
                "discount, so no plan will choose it; check the column and the unit (a price an "
                "hour, for the whole instance)",
                where,
                int(i) + 2,
                column,
                offers.loc[i, "instance_type"],
                float(offers.loc[i, column]),
                float(offers.loc[i, on_demand]),
                option.value,
            )


_CSV_TEMPLATE_HINT = (
    "a price list is a CSV with a header row of offer columns and one row per instance type; "
    "`planner offers --format csv` prints one to start from"
)


def _checked_text(data: bytes, where: str) -> bytes:
    """A user's price list as UTF-8 CSV text (a byte-order mark dropped), or an
    OfferValidationError that says what the file is instead: empty, a spreadsheet or other binary
    file, text in another encoding, or columns separated by something other than commas."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    if Path(where).suffix.lower() in (".yaml", ".yml", ".json"):
        raise OfferValidationError(
            f"is a {Path(where).suffix.lower()[1:].upper()} file; a price list is a CSV file",
            file=where,
            hint="hardware you own goes in --hardware FILE.yaml; " + _CSV_TEMPLATE_HINT,
        )
    if not data.strip():
        raise OfferValidationError("is empty", file=where, hint=_CSV_TEMPLATE_HINT)
    wide = wide_unicode(data)
    if wide is not None:  # a spreadsheet's "Unicode Text", PowerShell's Export-Csv > file
        raise OfferValidationError(
            f"is {wide} text, not UTF-8", file=where, hint=SAVE_AS_UTF8 + "; " + _CSV_TEMPLATE_HINT
        )
    if data.startswith((b"PK\x03\x04", b"\xd0\xcf\x11\xe0")) or b"\x00" in data[:4096]:
        raise OfferValidationError(
            "looks like a binary file (a spreadsheet?), not CSV text",
            file=where,
            hint="save or export it as CSV (comma-separated values, UTF-8); " + _CSV_TEMPLATE_HINT,
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise OfferValidationError(
            not_utf8(data, e),
            file=where,
            hint="save it as CSV UTF-8 (in a spreadsheet: Save As, CSV UTF-8)",
        ) from None
    header = text.splitlines()[0]
    _refuse_repeated_columns(header, where)
    for sep, name in ((";", "semicolons"), ("\t", "tabs")):
        if "," not in header and sep in header:
            raise OfferValidationError(
                f"the header row is separated by {name}, not commas",
                file=where,
                hint="save it as comma-separated CSV (a spreadsheet in a locale with decimal "
                "commas writes ';'); prices take a decimal point: 3.20",
            )
    return data


def _refuse_repeated_columns(header: str, where: str) -> None:
    """A column named twice in the header row, as an OfferValidationError naming it: pandas reads
    the second one as ``provider.1``, which was then reported as an unknown column."""
    try:
        cells = [c.strip() for c in next(csv.reader([header]), [])]
    except csv.Error:
        return  # the reader's own reason says what is wrong
    seen: set[str] = set()
    for number, cell in enumerate(cells, start=1):
        if cell and cell in seen:
            raise OfferValidationError(
                f"the header row names column {cell!r} twice (again as column {number})",
                file=where,
                hint="keep one column of each name: delete the other one and its values",
            )
        seen.add(cell)


def _parse_offers_csv(src: io.BytesIO, where: str, *, users: bool = False) -> pd.DataFrame:
    """The raw table of an offers CSV (not yet validated).  Unreadable CSV is a SnapshotError, or
    for a user's price list (``users``) an OfferValidationError: a row with more values than the
    header has columns names the row (pandas would quietly take its first value as the row's
    index and shift the rest one column left)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", pd.errors.ParserWarning)
            # dtypes are inferred; a stray word in a number column leaves it as text, which
            # validate_offers reports with its row and column
            return pd.read_csv(src, keep_default_na=False, na_values=[""], index_col=False)
    except (
        pd.errors.ParserError,
        pd.errors.ParserWarning,
        pd.errors.EmptyDataError,
        UnicodeDecodeError,
    ) as e:
        if users:
            _check_row_lengths(src.getvalue().decode("utf-8", "replace"), where)
        reason = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        hint = (
            "a price list is a CSV with a header row of offer columns; "
            "`planner offers --format csv` prints one"
        )
        if users:
            raise OfferValidationError(
                f"not a readable CSV ({reason})", file=where, hint=hint
            ) from e
        raise SnapshotError(f"{where}: not a readable CSV ({reason})", hint=hint) from e


def _check_row_lengths(text: str, where: str) -> None:
    """The first row with more values than the header names columns, as an
    OfferValidationError (rows count as a spreadsheet shows them: the header is row 1)."""
    try:
        rows = csv.reader(io.StringIO(text))
        header = next(rows, [])
        for number, row in enumerate(rows, start=2):
            if len(row) > len(header):
                raise OfferValidationError(
                    f"row {number} has {len(row)} values, but the header row names "
                    f"{len(header)} columns",
                    file=where,
                    hint="a comma inside a value needs the value in double quotes "
                    '("1,024"); otherwise drop the extra values or add their column to the header',
                )
    except csv.Error:
        return  # pandas' own reason says what is wrong


def list_snapshots(root: Path) -> list[Path]:
    """Complete snapshot directories under ``root``, oldest first (by id).

    A folder that does not exist yet holds none; one that cannot be read (no permission, a name
    too long for the file system, a file where the folder or one of its parents should be) is a
    SnapshotError: its snapshots would be skipped unseen.  ``Path.is_dir()`` would call a path
    under a file simply "not a folder", so the status is read here, once.
    """
    try:
        mode = root.stat().st_mode
    except FileNotFoundError:
        return []
    except OSError as e:
        raise _unreadable_root(root, _read_reason(e), setting=e.errno in _SETTING_ERRNOS) from e
    if not stat.S_ISDIR(mode):
        raise _unreadable_root(root, "it is a file, not a folder", setting=True)
    try:
        entries = list(root.iterdir())
        return sorted(
            p
            for p in entries
            if p.is_dir() and not p.name.startswith(".") and (p / MANIFEST).exists()
        )
    except OSError as e:
        raise _unreadable_root(root, _read_reason(e), setting=e.errno in _SETTING_ERRNOS) from e


# A folder path that cannot be one (a file on the way, a name too long, a loop of links): the setting
# that named it is wrong, not the machine (a full or read-only disk, a permission).
_SETTING_ERRNOS = frozenset({errno.ENOTDIR, errno.ENAMETOOLONG, errno.ELOOP})

# Why a snapshot folder cannot be read, in words; anything else: the system's reason.
_READ_REASONS = {
    errno.ENOTDIR: "part of that path is a file, not a folder",
    errno.ENAMETOOLONG: "the path is too long for the file system",
    errno.ELOOP: "a loop of symbolic links",
    errno.EACCES: "no permission to read it",
    errno.EPERM: "no permission to read it",
}


def _read_reason(e: OSError) -> str:
    return _READ_REASONS.get(e.errno or 0, e.strerror or str(e))


def _unreadable_root(root: Path, reason: str, *, setting: bool = False) -> SnapshotError:
    """A snapshot folder that cannot be read: where, why, and the fix.  When it comes from
    ``PLANNER_DATA_DIR`` the message names the variable, since that is what the user set; where
    the setting itself is at fault (``setting``: a file on the path, a name too long) it is bad
    input, a :class:`DataDirError` (exit 2, as where the same setting is read for calibrations;
    was exit 1 here)."""
    from_env = os.environ.get("PLANNER_DATA_DIR")
    if from_env and Path(root) == Path(os.path.expanduser(from_env)) / "snapshots":
        return (DataDirError if setting else SnapshotError)(
            f"PLANNER_DATA_DIR={shown_path(from_env)} cannot be used: cannot read the snapshot "
            f"folder {shown_path(root)} ({reason})",
            hint="set PLANNER_DATA_DIR to a folder you can read and write (snapshots go in its "
            "snapshots/ subfolder), or unset it to use the default",
        )
    return SnapshotError(
        f"cannot read the snapshot folder {shown_path(root)} ({reason})",
        hint="check the folder and its permissions, or set PLANNER_DATA_DIR to another folder",
    )


@dataclass(frozen=True)
class ProviderSnapshot:
    """Which snapshot a provider's offers come from."""

    provider: str
    path: Path
    entry: ProviderEntry
    created_at: str


def newest_per_provider(
    roots: Sequence[Path], *, skip: Collection[Path] = ()
) -> dict[str, ProviderSnapshot]:
    """For each provider, the newest snapshot (by created_at) among ``roots`` that has it,
    leaving out the snapshot directories in ``skip`` (found corrupt)."""
    best: dict[str, ProviderSnapshot] = {}
    for root in roots:
        for path in list_snapshots(root):
            if path in skip:
                continue
            try:
                manifest = read_manifest(path)
            except SnapshotError as e:
                log.warning("skipping %s: %s", path, e)
                continue
            for entry in manifest.providers:
                cur = best.get(entry.provider)
                if cur is None or manifest.created_at > cur.created_at:
                    best[entry.provider] = ProviderSnapshot(
                        entry.provider, path, entry, manifest.created_at
                    )
    return best


def snapshot_age_days(as_of: str, today: date | None = None) -> int:
    today = today or clock.utc_today()
    return (today - date.fromisoformat(as_of)).days


def load_newest(
    roots: Sequence[Path],
) -> tuple[dict[str, ProviderSnapshot], dict[Path, Snapshot]]:
    """The newest snapshot per provider, loaded.  A snapshot that fails to load (a truncated or
    deleted offers file, a checksum mismatch) is skipped with a warning and the next newest one
    of its providers is used, down to the bundled snapshot: a corrupt refresh loses no prices."""
    skip: set[Path] = set()
    while True:
        chosen = newest_per_provider(roots, skip=skip)
        by_path: dict[Path, list[str]] = {}
        for provider, ps in chosen.items():
            by_path.setdefault(ps.path, []).append(provider)
        snaps: dict[Path, Snapshot] = {}
        try:
            for path, names in by_path.items():
                snaps[path] = load_snapshot(path, providers=names)
        except (SnapshotError, OfferValidationError) as e:
            # ends: each pass skips one more of finitely many snapshots
            log.warning("skipping snapshot %s, using an older one: %s", path, e)
            skip.add(path)
            continue
        return chosen, snaps

"""The embedded store: one SQLite file per data owner holding the privacy budget odometer
(:mod:`dpfed_core.privacy.odometer`) and the run history (:mod:`dpfed_core.evaluation.history`).

Location (documented; tests always pass an explicit temporary path):

1. an explicit path (Python argument, CLI ``--store FILE``);
2. else the environment variable ``DPFED_STORE``;
3. else ``$XDG_DATA_HOME/dpfed/dpfed.sqlite3`` (``~/.local/share/dpfed/dpfed.sqlite3`` when
   ``XDG_DATA_HOME`` is unset) — the file both front ends use, so one cap binds the command line and
   the dashboard. :func:`default_store_path` with ``owner=`` names a separate file in that directory
   (``dpfed-<owner>.sqlite3``) for a caller that keeps owners apart.

Why SQLite and how it is used safely by several processes (CLI runs, Streamlit sessions):

* WAL journal (readers never block the writer), ``synchronous=FULL`` (a committed charge survives
  a power cut: an odometer that forgets a charge under-counts the spend);
* every budget decision is one ``BEGIN IMMEDIATE`` transaction (read the spend, compare with the cap,
  insert the charge), so two sessions can never both pass the cap check on the same remaining
  budget; a writer waits up to ``timeout`` seconds for the lock, then gets a :class:`StoreError`;
* one short-lived connection per operation (safe across Streamlit's threads);
* a ``schema_version`` table; a file from a newer dpfed, a file that is not SQLite, or a damaged file
  raises :class:`StoreError` naming the file and what to do — it is **never** silently recreated
  (that would reset every budget to zero); so is a file emptied to 0 bytes while its fingerprint key
  is beside it (SQLite would read it as a new database), or deleted while its key stays;
* the file is created with mode 0600 in a 0700 directory (results derive from private data);
* no dataset is named by its unkeyed content hash, which would tell whoever holds the file and the other
  rows whether a person is in the data: an account's name is its content key under the secret kept beside
  the store (``dk-``); a store of the older naming (``ds-``) is renamed in one transaction when it is
  first opened for writing (:meth:`Store._name_accounts_by_key`).
"""
from __future__ import annotations

import contextlib
import datetime as _dt
import os
import re
import sqlite3
from pathlib import Path
from typing import Iterator

from dpfed_core.errors import DpfedError

#: Version of the schema below; bump with a migration in :data:`_MIGRATIONS`.
SCHEMA_VERSION = 4

#: The first schema whose accounts are named by their keyed name (``dk-``, :func:`~dpfed_core.privacy.
#: fingerprint.keyed_key`); an older store's content keys (``ds-``) are renamed when it is opened for writing.
KEYED_NAMES_VERSION = 4

#: A content key as older stores wrote it (:func:`~dpfed_core.privacy.budget_records.dataset_key`).
_CONTENT_KEY = re.compile(r"\bds-[0-9a-f]{40}\b")

#: Environment variable naming the store file.
STORE_ENV = "DPFED_STORE"

#: Seconds a writer waits for another session's transaction before giving up.
DEFAULT_TIMEOUT = 15.0

_SCHEMA_V1 = """
CREATE TABLE schema_version (version INTEGER NOT NULL);
CREATE TABLE datasets (
    key         TEXT PRIMARY KEY,            -- content fingerprint (odometer.dataset_key)
    name        TEXT NOT NULL,               -- display name at the last registration
    entities    TEXT NOT NULL,               -- JSON list of entity names
    first_seen  TEXT NOT NULL,
    last_seen   TEXT NOT NULL
);
CREATE TABLE caps (
    dataset_key TEXT PRIMARY KEY REFERENCES datasets(key),
    epsilon     REAL NOT NULL,               -- per entity; inf = no cap
    delta       REAL NOT NULL,               -- per entity
    set_at      TEXT NOT NULL,
    allow_non_private INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE releases (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    dataset_key TEXT NOT NULL REFERENCES datasets(key),
    operation   TEXT NOT NULL,               -- one run / sweep / audit (several releases)
    kind        TEXT NOT NULL,               -- run | comparison | sweep point | audit
    method      TEXT NOT NULL,
    epsilon     REAL NOT NULL,               -- requested ε (inf = non-private)
    delta       REAL NOT NULL,
    seed        INTEGER,
    simulation  INTEGER NOT NULL,            -- 1: noise reproducible, no privacy claim, not charged
    non_private INTEGER NOT NULL,            -- 1: raw data or exact statistics left an entity
    status      TEXT NOT NULL,               -- reserved | released | failed (all are charged)
    created     TEXT NOT NULL,
    settled     TEXT,
    note        TEXT NOT NULL DEFAULT ''
);
CREATE INDEX releases_by_dataset ON releases(dataset_key, id);
CREATE TABLE charges (
    release_id  INTEGER NOT NULL REFERENCES releases(id),
    entity      TEXT NOT NULL,
    epsilon     REAL NOT NULL,               -- inf for a non-private release
    delta       REAL NOT NULL,
    PRIMARY KEY (release_id, entity)
);
CREATE TABLE history (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    dataset_key TEXT,
    dataset_name TEXT NOT NULL DEFAULT '',
    operation   TEXT,                        -- links to releases.operation
    kind        TEXT NOT NULL,               -- run | sweep | audit
    title       TEXT NOT NULL,
    method      TEXT NOT NULL DEFAULT '',
    epsilon     REAL,
    simulation  INTEGER NOT NULL,
    created     TEXT NOT NULL,
    config      TEXT NOT NULL,               -- JSON
    document    TEXT NOT NULL                -- JSON result document (inf as "inf")
);
CREATE INDEX history_by_dataset ON history(dataset_key, id);
"""

#: What the tight accountant needs per charge (ρ, Gaussian-only), the link from a
#: re-export to the dataset of the same people (alias, similarity, entity map), the people's
#: fingerprints, and the log of every cap change. Old rows keep ρ = NULL: they compose basically.
_SCHEMA_V2 = """
ALTER TABLE charges ADD COLUMN rho REAL;               -- ρ-zCDP of this release for this entity; NULL = none
ALTER TABLE charges ADD COLUMN gaussian INTEGER NOT NULL DEFAULT 0;  -- 1: Gaussian mechanisms only (μ-GDP)
ALTER TABLE releases ADD COLUMN batch TEXT;            -- non-adaptive batch (one sweep's points) or NULL
ALTER TABLE datasets ADD COLUMN alias_of TEXT;         -- key of the dataset of the same people, or NULL
ALTER TABLE datasets ADD COLUMN similarity REAL;       -- similarity of the people to alias_of's
ALTER TABLE datasets ADD COLUMN entity_map TEXT;       -- JSON: this dataset's entity → [alias_of's entities]
CREATE TABLE fingerprints (
    dataset_key TEXT PRIMARY KEY REFERENCES datasets(key),
    version     INTEGER NOT NULL,
    n_users     INTEGER NOT NULL,
    bands       INTEGER NOT NULL,
    keys        BLOB NOT NULL,                         -- n_users × bands uint64 LSH band keys
    entity      BLOB NOT NULL                          -- n_users int32: entity index of each user
);
CREATE TABLE cap_changes (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    dataset_key TEXT NOT NULL REFERENCES datasets(key),
    old_epsilon REAL,                                  -- NULL: no cap before
    old_delta   REAL,
    new_epsilon REAL NOT NULL,                         -- inf: cap removed
    new_delta   REAL NOT NULL,
    raised      INTEGER NOT NULL,                      -- 1: more budget than before (confirmed)
    changed_at  TEXT NOT NULL,
    note        TEXT NOT NULL DEFAULT ''
);
CREATE INDEX cap_changes_by_dataset ON cap_changes(dataset_key, id);
"""

#: Who made each release and each cap change (``user@host``, :func:`actor`), who settled or
#: withdrew a reservation, and the store's small facts (the id of its fingerprint key; a running sweep's
#: progress, ``progress:<operation>``, kept for the case its process is killed).
_SCHEMA_V3 = """
ALTER TABLE releases ADD COLUMN actor TEXT;            -- user@host that reserved it (NULL: older dpfed)
ALTER TABLE releases ADD COLUMN settled_by TEXT;       -- user@host that settled, failed or withdrew it
ALTER TABLE cap_changes ADD COLUMN actor TEXT;         -- user@host that changed the cap
CREATE TABLE meta (
    name        TEXT PRIMARY KEY,
    value       TEXT NOT NULL
);
"""

#: Nothing to create: the accounts are renamed in Python (:meth:`Store._name_accounts_by_key`), which needs
#: the store's secret; the version keeps an older dpfed, which would name them by content again, away.
_SCHEMA_V4 = ""

_MIGRATIONS: dict[int, str] = {1: _SCHEMA_V1, 2: _SCHEMA_V2, 3: _SCHEMA_V3, 4: _SCHEMA_V4}


def _statements(script: str) -> list[str]:
    """Split a script into complete statements (``executescript`` would commit on its own)."""
    out, buf = [], ""
    for line in script.splitlines(keepends=True):
        buf += line
        if sqlite3.complete_statement(buf):
            out.append(buf.strip())
            buf = ""
    if buf.strip():
        out.append(buf.strip())
    return out


class StoreError(DpfedError):
    """The store file cannot be used (locked for too long, not a dpfed store, damaged, unwritable)."""


def _cannot_write(msg: str) -> bool:
    """SQLite's words for a file this process cannot write (read-only, full disk, no access)."""
    low = msg.lower()
    return any(w in low for w in ("readonly", "read-only", "unable to open", "disk i/o", "database or disk is full",
                                  "disk is full"))


def actor() -> str:
    """Who is acting: ``user@host`` of this process (recorded beside every release and cap change)."""
    import getpass
    import socket

    try:
        user = getpass.getuser()
    except Exception:  # no login name (a container without passwd entry): the numeric uid
        user = f"uid {os.getuid()}" if hasattr(os, "getuid") else "unknown"
    return f"{user}@{socket.gethostname() or 'unknown host'}"


def process_identity() -> dict | None:
    """This process as a later process on the same machine can tell whether it still runs: host, boot,
    PID namespace, user, PID and the process's start time in clock ticks since boot (Linux ``/proc``).
    None where ``/proc`` cannot say it — no ``/proc``, or one of another PID namespace (a sandbox that
    did not mount its own), whose PIDs are not this process's: such a process is never taken for gone
    (:func:`process_gone`)."""
    import socket

    try:
        if os.readlink("/proc/self") != str(os.getpid()):
            return None
        boot = Path("/proc/sys/kernel/random/boot_id").read_text(encoding="ascii").strip()
        pidns = os.readlink("/proc/self/ns/pid")
        start = _start_ticks(Path("/proc/self/stat").read_text(encoding="ascii", errors="replace"))
    except OSError:
        return None
    if start is None:
        return None
    return {"host": socket.gethostname(), "boot": boot, "pidns": pidns, "uid": os.getuid(), "pid": os.getpid(),
            "start": start}


def _start_ticks(stat: str) -> int | None:
    """Field 22 of a ``/proc/PID/stat`` line (the start time after boot), None when it cannot be read."""
    # the command name (field 2) may hold spaces and parentheses: the fields after it follow its last ')'
    fields = stat.rsplit(")", 1)[-1].split()
    return int(fields[19]) if len(fields) > 19 and fields[19].isdigit() else None


#: The keys and types of a :func:`process_identity`: anything else is no proof of anything.
_IDENTITY_TYPES = {"host": str, "boot": str, "pidns": str, "uid": int, "pid": int, "start": int}


def process_gone(owner: object) -> bool:
    """True only when ``owner`` (a :func:`process_identity`) provably runs no more: recorded by this
    user, on this host, in this boot and this PID namespace — where a PID names one process and no
    ``hidepid`` mount hides a process of one's own user — and there is no process of that PID now, or one
    that started at another time (it ended; its PID names another process since). Any doubt — another
    machine or user, a reboot, a container of its own, no ``/proc``, a ``/proc`` that refuses the read,
    an identity of another shape — is False: the caller then leaves what that process holds as it is."""
    if not isinstance(owner, dict) or set(owner) != set(_IDENTITY_TYPES) or not all(
            type(owner[k]) is t for k, t in _IDENTITY_TYPES.items()) or owner["pid"] <= 0:
        return False
    me = process_identity()
    if me is None or any(owner[k] != me[k] for k in ("host", "boot", "pidns", "uid")):
        return False
    try:
        stat = Path(f"/proc/{owner['pid']}/stat").read_text(encoding="ascii", errors="replace")
    except (FileNotFoundError, ProcessLookupError):
        return True  # no such process: of this user, no mount option hides it
    except OSError:
        return False
    start = _start_ticks(stat)
    return start is not None and start != owner["start"]


def now_iso() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def data_home() -> Path:
    """``$XDG_DATA_HOME`` or ``~/.local/share``."""
    xdg = os.environ.get("XDG_DATA_HOME", "").strip()
    return Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".local" / "share"


def default_store_path(owner: str | None = None) -> Path:
    """The store file when none is given explicitly: ``$DPFED_STORE`` (ignored when ``owner`` is
    given), else ``<data home>/dpfed/dpfed.sqlite3``, or ``dpfed-<owner>.sqlite3`` for one data owner.
    """
    if owner is None:
        env = os.environ.get(STORE_ENV, "").strip()
        if env:
            return Path(env).expanduser()
        return data_home() / "dpfed" / "dpfed.sqlite3"
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", str(owner)).strip("._")[:80]
    if not safe:
        raise StoreError(f"data owner id {owner!r} has no usable characters (letters, digits, - _ .)")
    return data_home() / "dpfed" / f"dpfed-{safe}.sqlite3"


def resolve_store_path(path: str | os.PathLike | None = None) -> Path:
    return default_store_path() if path is None or str(path) == "" else Path(path).expanduser()


def own_key_left(path: str | os.PathLike) -> Path | None:
    """The fingerprint key of a store that does not exist, when that key is still beside it: the key is
    written after the file, when the store first names a dataset (its account's name is keyed with it), so the
    store held a budget, or was about to, and was deleted or moved. None otherwise; a key named by the environment may serve other stores and says
    nothing of this one."""
    from dpfed_core.privacy.fingerprint import SECRET_ENV, secret_path

    if os.environ.get(SECRET_ENV, "").strip():
        return None
    key = secret_path(path)
    return key if key.exists() else None


#: The first bytes of every SQLite 3 database file.
SQLITE_HEADER = b"SQLite format 3\x00"


def refuse_non_store_file(path: str | os.PathLike) -> None:
    """Refuse, without opening or changing it, a store path that cannot be a store: a directory, a
    device or pipe, or a non-empty file that is not an SQLite database (a table given by mistake).
    A path that does not exist, an empty file and any SQLite file pass: the store's own checks read
    those. Lets a command say it before it loads data or says anything else."""
    p = resolve_store_path(path)
    hint = f"choose another file with --store or {STORE_ENV}"
    if p.is_dir():
        raise StoreError(f"the store path {p} is a directory; give a file name", param="store")
    if not p.exists():
        return
    if not p.is_file():
        raise StoreError(f"the store {p} is a device, pipe or socket, not a file; {hint}", param="store")
    try:
        with open(p, "rb") as fh:
            head = fh.read(len(SQLITE_HEADER))
    except OSError as exc:
        raise StoreError(f"cannot read the store {p} ({exc.strerror or exc}); {hint}", param="store") from None
    if head and head != SQLITE_HEADER:
        raise StoreError(f"the store {p} is not a dpfed store (not an SQLite database: a table or another file?); "
                         f"it was left untouched — {hint}", param="store")


class Store:
    """Handle on one store file; opens a short-lived connection per operation.

    Parameters
    ----------
    path : file path, or None for :func:`default_store_path`.
    timeout : seconds to wait for another session's write lock.

    A store that cannot be written (a read-only file or directory, a full disk) still opens for
    reading when its schema is current, or the one before the accounts' keyed names (``unkeyed_names``: its
    accounts are found by their older names until it is opened for writing): ``budget show`` and the balances
    work, every write raises :class:`StoreError` (``readonly`` says which mode is in use). A store that cannot
    be created leaves no file behind.
    """

    def __init__(self, path: str | os.PathLike | None = None, timeout: float = DEFAULT_TIMEOUT,
                 fix: str | None = None) -> None:
        self.path = resolve_store_path(path)
        self.timeout = float(timeout)
        # what the store's errors tell the reader to do: a command's or the dashboard's controls by default;
        # a site's store is named by its policy, which takes neither
        self.fix = fix
        self.readonly = False
        # a read-only store of the older naming: its accounts may still carry their content keys (ds-)
        self.unkeyed_names = False
        if self.path.exists() and not self.path.is_file() and not self.path.is_dir():
            # SQLite blocks for ever opening a named pipe, and beside a device it writes its journal
            raise StoreError(f"the store {self.path} is a device, pipe or socket, not a file; {self._hint()}")
        self._initialise()

    def __repr__(self) -> str:
        return f"Store({str(self.path)!r})"

    # ------------------------------------------------------------------ connections
    def _hint(self) -> str:
        return self.fix or (f"choose another file with --store or {STORE_ENV} (the dashboard reads {STORE_ENV} when "
                            "it starts)")

    def _connect(self, readonly: bool = False, immutable: bool = False) -> sqlite3.Connection:
        try:
            if readonly:
                from urllib.parse import quote

                uri = f"file:{quote(str(self.path.resolve()))}?mode=ro" + ("&immutable=1" if immutable else "")
                con = sqlite3.connect(uri, uri=True, timeout=self.timeout, isolation_level=None)
            else:
                con = sqlite3.connect(str(self.path), timeout=self.timeout, isolation_level=None)
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open the store {self.path}: {exc}; {self._hint()}") from None
        con.row_factory = sqlite3.Row
        try:
            con.execute("PRAGMA busy_timeout = %d" % int(self.timeout * 1000))
            con.execute("PRAGMA foreign_keys = ON")
            if not readonly:
                con.execute("PRAGMA synchronous = FULL")
        except sqlite3.Error as exc:
            con.close()
            raise self._translate(exc) from None
        return con

    def _read_connection(self) -> sqlite3.Connection:
        """A connection inside a read transaction whose snapshot is already taken: read-write when
        the store can be written, else read-only (a write-ahead-logged file in a directory this
        process cannot write needs ``immutable``: it is then read as it is on disk)."""
        attempts = [(True, False), (True, True)] if self.readonly else [(False, False), (True, False), (True, True)]
        last: BaseException | None = None
        for ro, imm in attempts:
            try:
                con = self._connect(readonly=ro, immutable=imm)
            except StoreError as exc:
                last = exc
                continue
            try:
                con.execute("BEGIN")
                con.execute("SELECT COUNT(*) FROM schema_version").fetchone()
                return con
            except sqlite3.Error as exc:
                con.close()
                last = self._translate(exc)
                if not _cannot_write(str(exc)):
                    raise last from None
        assert last is not None
        raise last

    def _translate(self, exc: sqlite3.Error) -> StoreError:
        msg = str(exc)
        low = msg.lower()
        if "locked" in low or "busy" in low:
            return StoreError(
                f"the store {self.path} stayed locked by another session for more than {self.timeout:g} s; "
                "retry when the other run has finished")
        if "not a database" in low or "malformed" in low or "corrupt" in low:
            return StoreError(
                f"the store {self.path} is damaged or not a dpfed store ({msg}); it was left untouched — "
                f"move it aside (its budgets are lost only if you delete it) or {self._hint()}")
        if _cannot_write(msg):
            return StoreError(f"cannot write the store {self.path} ({msg}); {self._hint()}")
        return StoreError(f"store {self.path}: {msg}")

    @contextlib.contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        """A connection for reads (a consistent snapshot inside one ``BEGIN``); works on a store that
        cannot be written."""
        con = self._read_connection()
        try:
            yield con
            con.execute("COMMIT")
        except sqlite3.Error as exc:
            raise self._translate(exc) from None
        finally:
            con.close()

    @contextlib.contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """One ``BEGIN IMMEDIATE`` transaction: committed on success, rolled back on any exception."""
        if self.readonly:
            raise StoreError(f"the store {self.path} is read-only here (it could not be opened for writing); "
                             f"nothing was charged or changed; {self._hint()}")
        con = self._connect()
        try:
            try:
                con.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                raise self._translate(exc) from None
            try:
                yield con
            except BaseException:
                con.execute("ROLLBACK")
                raise
            try:
                con.execute("COMMIT")
            except sqlite3.Error as exc:
                raise self._translate(exc) from None
        except sqlite3.Error as exc:
            raise self._translate(exc) from None
        finally:
            con.close()

    # ------------------------------------------------------------------ schema
    def _version_of(self, con: sqlite3.Connection) -> int:
        tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if not tables:
            return 0
        if "schema_version" not in tables:
            raise StoreError(f"{self.path} is an SQLite file but not a dpfed store (no schema_version "
                             f"table); it was left untouched; {self._hint()}")
        row = con.execute("SELECT MAX(version) FROM schema_version").fetchone()
        version = int(row[0] or 0)
        if version > SCHEMA_VERSION:
            raise StoreError(f"the store {self.path} was written by a newer dpfed (schema {version} > "
                             f"{SCHEMA_VERSION}); upgrade dpfed or {self._hint()}")
        return version

    def _version_without_writing(self) -> int | None:
        """The existing file's schema version, read without writing (a read-only or full store opens
        for reading); None when it cannot be read so."""
        for imm in (False, True):
            try:
                con = self._connect(readonly=True, immutable=imm)
            except StoreError:
                continue
            try:
                return self._version_of(con)
            except sqlite3.Error as exc:
                if _cannot_write(str(exc)):
                    continue
                raise self._translate(exc) from None
            finally:
                con.close()
        return None

    def _initialise(self) -> None:
        parent = self.path.parent
        if self.path.is_dir():
            # the fix names where the path was given (--store, the policy's store key), not just the fault
            raise StoreError(f"the store path {self.path} is a directory; give a file name — {self._hint()}")
        if self.path.exists():
            self._refuse_wiped()
            version = self._version_without_writing()
            writable = os.access(self.path, os.W_OK) and os.access(parent, os.W_OK)
            if version == SCHEMA_VERSION or (version == KEYED_NAMES_VERSION - 1 and not writable):
                # a store of the older naming that cannot be written is read as it is (its accounts are
                # found by their content keys, BudgetOdometer._key_of); writable, it is renamed below
                self.readonly = not writable
                self.unkeyed_names = version < KEYED_NAMES_VERSION
                if version == SCHEMA_VERSION or not writable:
                    return
            self._migrate()
            return
        self._refuse_deleted()
        created = False
        try:
            parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            # Create the file private to the user before SQLite opens it.
            fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
            os.close(fd)
            created = True
        except FileExistsError:  # another session created it first
            pass
        except OSError as exc:
            raise StoreError(f"cannot create the store {self.path}: {exc.strerror}; {self._hint()}") from None
        try:
            self._migrate()
        except BaseException:
            if created:  # a store that could not be set up is no store: leave nothing behind
                for suffix in ("", "-wal", "-shm", "-journal"):
                    with contextlib.suppress(OSError):
                        os.unlink(str(self.path) + suffix)
            raise

    def _refuse_wiped(self) -> None:
        """Refuse a store file of 0 bytes whose fingerprint key exists. The key is written when the store
        first names a dataset (its account's name is keyed with it), so the file held a budget and its history was wiped (truncated, or
        overwritten by a failed copy); SQLite reads an empty file as a new database, which would give
        every entity a fresh budget. A genuinely new store has neither file nor key."""
        from dpfed_core.privacy.fingerprint import SECRET_ENV, secret_path

        try:
            if self.path.stat().st_size != 0:
                return
        except OSError:
            return  # gone meanwhile: the checks below name what is wrong
        key = secret_path(self.path)
        if not key.exists():
            return
        if os.environ.get(SECRET_ENV, "").strip():
            # a key named by the environment may serve other stores: deleting it would lose theirs
            fresh = (f"delete the empty file {self.path} (keep the key {key}, which {SECRET_ENV} names "
                     "and other stores may use)")
        else:
            fresh = f"delete the empty file {self.path} and its key {key} together"
        raise StoreError(
            f"the store {self.path} is empty (0 bytes) while its fingerprint key {key} exists: the store held "
            "a privacy budget and its history is gone (the file was emptied). Nothing was read or written. "
            f"Restore it from a backup of the store and its key; to start a new, empty budget deliberately, "
            f"{fresh}; or {self._hint()}")

    def _refuse_deleted(self) -> None:
        """Refuse to create a store whose own fingerprint key is already beside it (:func:`own_key_left`): a
        new file there would give every entity a fresh budget."""
        key = own_key_left(self.path)
        if key is not None:
            raise StoreError(
                f"the store {self.path} does not exist while its fingerprint key {key} does: the store held a privacy "
                "budget and was deleted or moved. Nothing was created. Restore it from a backup (or give the path it "
                f"moved to); to start a new, empty budget deliberately, delete the key {key} too; or {self._hint()}")

    def _migrate(self) -> None:
        con = self._connect()
        try:
            mode = con.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            if str(mode).lower() != "wal":
                raise StoreError(f"the store {self.path} cannot use write-ahead logging (journal mode {mode}); "
                                 f"put it on a local disk; {self._hint()}")
            con.execute("BEGIN IMMEDIATE")
            try:
                version = self._version_of(con)
                for v in range(version + 1, SCHEMA_VERSION + 1):
                    for stmt in _statements(_MIGRATIONS[v]):
                        con.execute(stmt)
                    if v == KEYED_NAMES_VERSION:
                        self._name_accounts_by_key(con)
                    con.execute("DELETE FROM schema_version")
                    con.execute("INSERT INTO schema_version (version) VALUES (?)", (v,))
                con.execute("COMMIT")
                self.unkeyed_names = False
            except BaseException:
                con.execute("ROLLBACK")
                raise
        except sqlite3.Error as exc:
            raise self._translate(exc) from None
        finally:
            con.close()

    def _name_accounts_by_key(self, con: sqlite3.Connection) -> None:
        """Rename every content key (``ds-…``) the store holds — in every text column of every table:
        the datasets and their aliases, releases, caps, cap changes, fingerprints, the history and the
        documents it keeps, notes — to the account's keyed name under the store's secret, inside the
        caller's transaction (all or nothing; balances, caps, aliases and reservations stay as they are under
        the new name). The secret is created when the store has none and nothing was keyed with one yet;
        a store whose secret is missing or another is refused, as every keyed operation refuses it."""
        from dpfed_core.privacy.fingerprint import (ITEM_SETS_FP_VERSION, FingerprintKeyError, create_secret,
                                                    keyed_key, read_secret, secret_id, secret_path)

        tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table' "
                                            "AND name NOT LIKE 'sqlite_%'")]
        columns = [(t, c["name"]) for t in tables for c in con.execute(f'PRAGMA table_info("{t}")')
                   if str(c["type"]).upper() == "TEXT"]
        held = [(t, c) for t, c in columns
                if con.execute(f'SELECT 1 FROM "{t}" WHERE "{c}" LIKE \'%ds-%\' LIMIT 1').fetchone()]
        if not held:
            return
        path = secret_path(self.path)
        secret = read_secret(path)
        row = con.execute("SELECT value FROM meta WHERE name = 'fingerprint_key_id'").fetchone()
        n_keyed = con.execute("SELECT COUNT(*) FROM fingerprints WHERE version >= ?",
                              (ITEM_SETS_FP_VERSION,)).fetchone()[0]
        if secret is None and (row is not None or n_keyed):
            raise FingerprintKeyError(
                f"the fingerprint key of the store {self.path} is missing (expected at {path}); this dpfed names "
                "the store's accounts with it and cannot open the store without it. Restore the key file from the "
                "backup of the store and its key, or choose another store with --store")
        if secret is not None and row is not None and secret_id(secret) != row[0]:
            raise FingerprintKeyError(
                f"the fingerprint key {path} is not the key of the store {self.path} (its fingerprints were made "
                f"with key {row[0]}); restore this store's own key from the backup of the store and its key, or "
                "choose another store with --store")
        if secret is None:
            secret = create_secret(path)
        con.execute("INSERT OR IGNORE INTO meta (name, value) VALUES ('fingerprint_key_id', ?)",
                    (secret_id(secret),))
        con.create_function("dpfed_keyed_names", 1, lambda text: _CONTENT_KEY.sub(
            lambda m: keyed_key(secret, m.group(0)), text) if isinstance(text, str) else text, deterministic=True)
        # a dataset's key and the rows naming it are renamed one after the other: checked at the commit
        con.execute("PRAGMA defer_foreign_keys = ON")
        for t, c in held:
            con.execute(f'UPDATE "{t}" SET "{c}" = dpfed_keyed_names("{c}") WHERE "{c}" LIKE \'%ds-%\'')

    def schema_version(self) -> int:
        with self.read() as con:
            return int(con.execute("SELECT MAX(version) FROM schema_version").fetchone()[0])

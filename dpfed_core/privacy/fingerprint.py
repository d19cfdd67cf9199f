"""Who is in a dataset, without telling anyone who is in it: the keyed people fingerprint the budget
odometer (:mod:`dpfed_core.privacy.odometer`) uses to charge every reading and re-export of the
same people to one account.

What is fingerprinted
    Each user is the *set of items* they have (a nonzero entry). Values play no part: every read
    option changes them (``--value-kind implicit`` turns ratings into 1s, ``--duplicates`` sums or
    averages, ``--value-max`` bounds them, ``--mode`` reads zeros differently) and a re-export with
    every value moved by ±1 is the same people. Row order and entity names play no part either. What
    no read option changes — which items each user has — is what is compared, in four families of
    band keys (:data:`ALL_BANDS` per user):

    * the item sets: MinHash over the keyed item ids;
    * the shape: the same MinHash over a keyed label of each item computed from how many users have it
      (:func:`_shape_labels`), so a reading that names the items otherwise — another id column of the
      same file, a catalogue renamed one to one — is the same people;
    * the ids: each user's keyed id, when the ids are record numbers rather than a counter
      (:func:`ids_are_counters`), so the same people read with other items altogether (another
      column, another table of theirs) are found; one id shares :data:`MIN_BANDS` bands;
    * the profile: MinHash over each user's items read as popularity-rank bins, every token keyed by
      the user's id, counters included (:func:`_profile_keys`), so a re-export that renames the items
      *and* changes their counts (rows dropped, users left out or added) is the same people as long as
      they keep their ids.

    MinHash over each user's token set, :data:`FP_BANDS` bands of :data:`FP_ROWS` rows (LSH). Two
    users of item-set Jaccard similarity J share a given band with probability J^ROWS; a user
    *matches* a stored user when they share at least :data:`MIN_BANDS` bands. Users with fewer than
    :data:`MIN_ITEMS` items identify no one and are left out; an item set several users of one
    dataset share (a standard order set) is fingerprinted once, so generic profiles count as one
    person (and duplicating every user does not hide anyone).

Keyed: the store is no membership oracle
    Every item id, shape label and user id is hashed with a keyed BLAKE2b under a 256-bit secret, and
    the band keys are mixed with values derived from it. Without the secret, a known person's record
    gives no band key to look up: the store file alone cannot say whether someone is in a dataset.
    The secret is a file *beside the store, outside it*: ``<store file>.fpkey`` (:func:`secret_path`),
    created on first use with mode 0600, 32 bytes from the operating system. Its id (a keyed hash of it, which
    reveals nothing of it) is written into the store, so a store is never matched with another
    store's key. The store *and* its key together do answer membership questions for anyone who
    holds a person's record (or, under record-number ids, a person's id) — protect both like the
    data (docs/PRIVACY.md).

    A store whose fingerprints were made with a key that is now missing is refused (:class:`FingerprintKeyError`):
    a new key would make every stored account unrecognisable and give re-exports a fresh budget.

Older stores (unkeyed fingerprints, version 1)
    Version-1 fingerprints (unkeyed (item, value) tokens with public seeds) cannot be recomputed
    without the data. They are kept and still compared, by the version-1 algorithm
    (:func:`legacy_fingerprint`), with every dataset read, so no account loses its history; the
    first time a dataset with a version-1 fingerprint is charged or capped again (same content), its fingerprint
    is replaced by the keyed one (a one-time rekey). Until then those entries still answer
    membership questions; ``budget show`` says how many remain
    (:meth:`~dpfed_core.privacy.odometer.BudgetOdometer.unkeyed_fingerprints`). Keyed fingerprints of
    the item sets alone (version 2) are compared on those bands (:meth:`PeopleFingerprint.item_sets_only`)
    and rewritten with every band when their data is next charged or capped.

Matching (:func:`match_people`) and the account decision (:func:`is_same_people`)
    ``contained`` = the larger of the share of the new dataset's users found in the stored one and
    the share of the stored dataset's users found in the new one (containment, either way). A new
    dataset is charged to a stored account when ``contained ≥ CONTAINMENT_THRESHOLD`` and at least
    :data:`MIN_MATCHED_USERS` users matched: a subsample of a quarter of the stored people mixed with
    any number of others is still charged to them. The measured table is in docs/PRIVACY.md
    ("Threat model of the people fingerprint").
"""
from __future__ import annotations

import hashlib
import hmac
import os
import re
import secrets
import weakref
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from dpfed_core.errors import DpfedError

#: MinHash signature length = BANDS × ROWS; a user pair of Jaccard similarity J shares at least one
#: band with probability 1 − (1 − J^ROWS)^BANDS.
FP_BANDS, FP_ROWS = 8, 4
#: Version of the fingerprint stored beside it: 4 = keyed item sets, item-name-free shape, user ids and
#: each user's popularity profile under their id; 3 = the first three of those (the first
#: 2 × FP_BANDS + ID_BANDS bands of version 4); 2 = keyed item sets only (the first FP_BANDS bands);
#: 1 = unkeyed (item, value).
FP_VERSION = 4
SHAPE_FP_VERSION = 3
ITEM_SETS_FP_VERSION = 2
LEGACY_FP_VERSION = 1
#: A user matches a stored user when their item sets share at least this many LSH bands (of
#: FP_BANDS): Jaccard 0.9 → 99 %, 0.8 → 90 %, 0.5 → 1 %, 0.3 → 3·10⁻⁵.
MIN_BANDS = 3
#: A band key more stored users than this hold is generic (a common sub-profile) and is not used.
MAX_BAND_SHARE = 64
#: Users with fewer items are not fingerprinted (one or two items identify nobody).
MIN_ITEMS = 3
#: A new dataset is charged to a stored account when this share of its users, or of the stored
#: dataset's users, matched (containment either way).
CONTAINMENT_THRESHOLD = 0.2
#: ...and at least this many users matched: one found person is enough — a dataset of a few of the stored
#: people is charged to them (releasing two people at a time must not escape the cap), and a coincidence
#: between unrelated data can only add a charge, never take one away.
MIN_MATCHED_USERS = 1

#: Bands of a version-4 fingerprint, in this order: the item sets' (FP_BANDS), the shape's (FP_BANDS: the
#: same MinHash over labels computed from who has how many items, not from the item ids), the user id's
#: (ID_BANDS copies of one keyed id hash: one id found again shares MIN_BANDS bands, a match by itself)
#: and the profile's (FP_BANDS: MinHash of each user's items read as popularity-rank bins, every token
#: keyed by the user's id, :func:`_profile_keys`).
ID_BANDS = MIN_BANDS
ALL_BANDS = 3 * FP_BANDS + ID_BANDS
#: Bands each keyed version holds (a prefix of the newest).
BANDS_OF_VERSION = {ITEM_SETS_FP_VERSION: FP_BANDS, SHAPE_FP_VERSION: 2 * FP_BANDS + ID_BANDS, FP_VERSION: ALL_BANDS}
#: The profile reads the items a dataset holds in this many bins of popularity rank...
PROFILE_BINS = 32
#: ...with this many min-hashes a band (fewer than FP_ROWS: a profile found again is less exact than an
#: item set, and the user's id, which every token carries, already keeps unrelated people apart)...
PROFILE_ROWS = 3
#: ...for users with at least this many items (a short profile is shared by too many people).
PROFILE_MIN_ITEMS = 8
#: User ids that are numbers of one counter (1, 2, 3 …; P00001 …) filling at least this share of the
#: range they span say nothing about who someone is: unrelated datasets numbered alike share them.
COUNTER_DENSITY = 0.05

#: Bytes of the fingerprint secret.
SECRET_BYTES = 32
#: Environment variable naming the secret file (else :func:`secret_path` beside the store).
SECRET_ENV = "DPFED_FINGERPRINT_KEY"


class FingerprintKeyError(DpfedError):
    """The fingerprint secret is missing, damaged or belongs to another store."""


# ================================================================================ the secret
def secret_path(store_path: str | os.PathLike) -> Path:
    """Where the fingerprint secret of a store lives: ``$DPFED_FINGERPRINT_KEY`` when set, else the
    store file's path with ``.fpkey`` appended (beside the store, never inside it; for a store named by a
    symbolic link to its file, beside the file, unless a key sits beside the link)."""
    env = os.environ.get(SECRET_ENV, "").strip()
    if env:
        return Path(env).expanduser()
    p = Path(store_path)
    beside = p.with_name(p.name + ".fpkey")
    if p.is_symlink() and not beside.exists():
        # a store reached through a link to its file: its key is beside the file itself
        target = p.resolve()
        return target.with_name(target.name + ".fpkey")
    return beside


def secret_id(secret: bytes) -> str:
    """A name for a secret that reveals nothing of it (keyed hash of a constant)."""
    return hmac.new(secret, b"dpfed fingerprint key id", hashlib.sha256).hexdigest()[:24]


def read_secret(path: Path) -> bytes | None:
    """The secret in ``path``, None when there is no such file; a damaged file is an error."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise FingerprintKeyError(f"cannot read the fingerprint key {path}: {exc.strerror}") from None
    if len(data) != SECRET_BYTES:
        raise FingerprintKeyError(f"the fingerprint key {path} is damaged ({len(data)} bytes, expected "
                                  f"{SECRET_BYTES}); restore it from a backup of the store and its key")
    return data


def create_secret(path: Path) -> bytes:
    """A new secret from the operating system's entropy, written to ``path`` with mode 0600 (never
    over an existing file). A failed write leaves no file behind."""
    secret = secrets.token_bytes(SECRET_BYTES)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    except FileExistsError:
        got = read_secret(path)
        assert got is not None
        return got  # another session created it first
    except OSError as exc:
        raise FingerprintKeyError(f"cannot create the fingerprint key {path}: {exc.strerror}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(secret)
            f.flush()
            os.fsync(f.fileno())
    except OSError as exc:
        path.unlink(missing_ok=True)
        raise FingerprintKeyError(f"cannot write the fingerprint key {path}: {exc.strerror}") from None
    return secret


# ================================================================================ fingerprints
_M64 = 0xFFFFFFFFFFFFFFFF


def _mix64(x: np.ndarray) -> np.ndarray:
    """splitmix64 finaliser on a uint64 array (wrapping arithmetic)."""
    x = np.asarray(x, dtype=np.uint64)
    with np.errstate(over="ignore"):
        x = x ^ (x >> np.uint64(30))
        x = x * np.uint64(0xBF58476D1CE4E5B9)
        x = x ^ (x >> np.uint64(27))
        x = x * np.uint64(0x94D049BB133111EB)
        x = x ^ (x >> np.uint64(31))
    return x


@dataclass(frozen=True)
class PeopleFingerprint:
    """LSH band keys of every user (rows of users left out — too few items, or a repeat of an item
    set another user of the same dataset has — are all 0 and never match), each user's entity index, and the
    fingerprint's version."""

    keys: np.ndarray       # (n_users, FP_BANDS) uint64
    entity: np.ndarray     # (n_users,) int32
    entity_names: tuple[str, ...]
    version: int = FP_VERSION

    @property
    def n_users(self) -> int:
        return int(self.keys.shape[0])

    @property
    def n_informative(self) -> int:
        return int((self.keys != 0).any(axis=1).sum())

    def as_version(self, version: int) -> "PeopleFingerprint":
        """This fingerprint as an older keyed version holds it (:data:`BANDS_OF_VERSION`: a prefix of the
        bands), to be compared with a store's entries of that version."""
        return PeopleFingerprint(np.ascontiguousarray(self.keys[:, :BANDS_OF_VERSION[version]]), self.entity,
                                 self.entity_names, version)

    def item_sets_only(self) -> "PeopleFingerprint":
        """The item sets' bands alone, as a version-2 fingerprint (what a store's keyed entries of that
        version hold)."""
        return self.as_version(ITEM_SETS_FP_VERSION)


def _minhash_bands(X, tok: np.ndarray, band_salt: np.ndarray, rows_per_band: int = FP_ROWS) -> np.ndarray:
    """(n_users, FP_BANDS) band keys of the token sets of X's rows (0 for empty rows), ``rows_per_band``
    min-hashes per band."""
    n = X.shape[0]
    nnz = np.diff(X.indptr)
    rows = np.flatnonzero(nnz > 0)
    keys = np.zeros((n, FP_BANDS), dtype=np.uint64)
    if rows.size:
        starts = X.indptr[:-1][rows]
        K = FP_BANDS * rows_per_band
        mins = np.empty((rows.size, K), dtype=np.uint64)
        for k in range(K):
            seed = np.uint64((0x9E3779B97F4A7C15 * (k + 1)) & _M64)
            mins[:, k] = np.minimum.reduceat(_mix64(tok ^ seed), starts)
        for b in range(FP_BANDS):
            h = np.full(rows.size, band_salt[b], dtype=np.uint64)
            for r in range(rows_per_band):
                h = _mix64(h ^ mins[:, b * rows_per_band + r])
            keys[rows, b] = np.where(h == 0, np.uint64(1), h)
    return keys


def _drop_uninformative(X, keys: np.ndarray) -> None:
    """Zero (in place) the band keys of users with fewer than :data:`MIN_ITEMS` items, which identify nobody,
    and of every repeat of a set of keys another user of the dataset has (a standard order set: shared
    generic profiles count as one person)."""
    keys[np.diff(X.indptr) < MIN_ITEMS] = 0
    live = np.flatnonzero(keys[:, 0] != 0)
    if live.size:
        _, first = np.unique(keys[live], axis=0, return_index=True)
        dup = np.ones(live.size, dtype=bool)
        dup[first] = False
        keys[live[dup]] = 0


def _shape_labels(X, secret: bytes) -> np.ndarray:
    """A keyed label for every item computed from the data's shape alone — how many users have it — or 0
    for an item whose count another item of the data shares (a tie names no item). A reading that names
    the items otherwise (another id column, a renamed catalogue, titles for ids) gives each item the
    same label, so each user the same tokens; item ids, user ids, values and row order play no part.

    Why the count alone and only untied: a label that also read the item's users (their numbers of
    items) changed for every item as soon as two titles of one catalogue merged (MovieLens read by
    title: 0 of 943 users found again); a tied count, as every count of a catalogue drawn uniformly is,
    took unrelated people for each other (79 % of them on 300 × 400 uniform ratings). Untied counts
    label 99 of MovieLens' 1,682 items, 119 of the eICU demo's 189 and of sample:clinic's 143, enough
    for 99.5 %, 94.5 % and 98 % of their users to hold three (docs/PRIVACY.md)."""
    salt = np.frombuffer(hashlib.blake2b(b"shape", digest_size=8, key=secret, person=b"dpfed-fp-shape").digest(),
                         dtype="<u8").astype(np.uint64)
    per_item = np.bincount(X.indices, minlength=X.shape[1])
    counts, ties = np.unique(per_item, return_counts=True)
    untied = np.isin(per_item, counts[ties == 1]) & (per_item > 0)
    return np.where(untied, _mix64(per_item.astype(np.uint64) ^ salt[0]), np.uint64(0))


def _canonical_ids(user_ids) -> list[str]:
    """Every id as :func:`canonical_item_id` reads it (``0242`` and ``242.0`` are ``242``)."""
    return [canonical_item_id(u) for u in np.asarray(user_ids).tolist()]


def ids_are_counters(user_ids) -> bool:
    """True when most user ids are numbers of one counter with one common prefix (``1, 2, 3 …``,
    ``P00001 …``, ``u17``) filling at least :data:`COUNTER_DENSITY` of the range they span: unrelated
    datasets numbered so share their ids, which then tell nothing about who is in them. Names, hashes,
    UUIDs and sparse record numbers (``patientunitstayid``) are not counters."""
    return _are_counters(_canonical_ids(user_ids))


def _prefix_groups(ids: list[str]) -> tuple[list[tuple[str, str] | None], dict[str, list[int]]]:
    """Each id read as (prefix, number) (None when it is not one), and the numbers of each prefix in
    first-seen order of the prefixes."""
    parts = [m.groups() if m is not None else None for m in map(_COUNTER.fullmatch, ids)]
    groups: dict[str, list[int]] = {}
    for part in parts:
        if part is not None:
            groups.setdefault(part[0], []).append(int(part[1]))
    return parts, groups


def _dense(nums: list[int]) -> bool:
    """Whether the distinct numbers fill at least :data:`COUNTER_DENSITY` of the range they span."""
    return len(set(nums)) >= COUNTER_DENSITY * (max(nums) - min(nums) + 1)


def _are_counters(ids: list[str]) -> bool:
    """:func:`ids_are_counters` of ids already read canonically: the prefix most ids have (the first
    seen of equally common ones) holds at least half of them, and its numbers are dense."""
    if not ids:
        return True
    _, groups = _prefix_groups(ids)
    if not groups:
        return False
    nums = max(groups.values(), key=len)
    return len(nums) >= 0.5 * len(ids) and _dense(nums)


def _counter_ids(ids: list[str]) -> np.ndarray:
    """Which ids are numbers of a counter: of one prefix whose numbers fill at least
    :data:`COUNTER_DENSITY` of the range they span (``x1 … x2620``, ``1, 2, 3 …``). Judged per prefix,
    not for the dataset as a whole: dummy users numbered by a counter and added to sparse record numbers
    must not make the record numbers count as a counter too."""
    parts, groups = _prefix_groups(ids)
    dense = {pre for pre, nums in groups.items() if _dense(nums)}
    return np.fromiter((part is not None and part[0] in dense for part in parts), dtype=bool, count=len(ids))


def _user_hashes(ids: list[str], secret: bytes) -> np.ndarray:
    """Each canonical user id hashed under the key (never 0)."""
    h = np.fromiter(
        (int.from_bytes(hashlib.blake2b(u.encode("utf-8"), digest_size=8, key=secret,
                                        person=b"dpfed-fp-user").digest(), "little")
         for u in ids), dtype=np.uint64, count=len(ids))
    return np.where(h == 0, np.uint64(1), h)


def _id_keys(ids: list[str], user_h: np.ndarray) -> np.ndarray:
    """(n_users, ID_BANDS): each user's keyed id hash in every column, 0 for an id that is a number of
    a counter (:func:`_counter_ids`), which unrelated datasets share."""
    keys = np.zeros((len(ids), ID_BANDS), dtype=np.uint64)
    if len(ids) == 0:
        return keys
    keys[:] = user_h[:, None]
    keys[_counter_ids(ids)] = 0
    return keys


def _profile_keys(X, user_h: np.ndarray, secret: bytes) -> np.ndarray:
    """(n_users, FP_BANDS): MinHash bands of each user's *popularity profile* under their own id.

    Why: a re-export that renames every item *and* changes how many users have them (rows dropped, users
    left out or added, an entity left out) moves both the item sets' bands (other ids) and the shape's
    (other counts), yet each person keeps their id and nearly the same items. Read without their names,
    the items are bins of popularity rank — :data:`PROFILE_BINS` bins over the items the dataset holds,
    tied counts at their average rank, so renaming changes nothing and a few percent more or fewer users
    per item moves few items to the next bin — and a user is the multiset of their items' bins, each
    token carrying the keyed hash of their id. Two users share a band only when they have the same id
    *and* nearly the same profile: counters (1, 2, 3 …), which unrelated datasets share, then keep
    unrelated people apart, which the ids alone (:func:`_id_keys`) cannot. Users with fewer than
    :data:`PROFILE_MIN_ITEMS` items are left out (short profiles are shared by too many people), and so
    is every user whose profile, id aside, another user of the dataset has."""
    n = X.shape[0]
    per_item = np.bincount(X.indices, minlength=X.shape[1])
    held = per_item > 0
    if not held.any():
        return np.zeros((n, FP_BANDS), dtype=np.uint64)
    nnz = np.diff(X.indptr)
    # average rank (0-based, most users first) of each held item: tied counts share their mean position
    _, inverse, ties = np.unique(-per_item[held], return_inverse=True, return_counts=True)
    start = np.cumsum(ties) - ties
    avg_rank = start[inverse] + (ties[inverse] - 1) / 2.0
    width = max(1.0, np.ceil(held.sum() / PROFILE_BINS))
    label = np.zeros(X.shape[1], dtype=np.int64)
    label[held] = np.floor(avg_rank / width).astype(np.int64)
    row = np.repeat(np.arange(n), nnz)
    lab = label[X.indices]
    order = np.lexsort((lab, row))           # row-major, each row's entries by bin: rows keep their indptr
    row, lab = row[order], lab[order]
    new_group = np.r_[True, (row[1:] != row[:-1]) | (lab[1:] != lab[:-1])]
    group_start = np.flatnonzero(new_group)
    occ = np.arange(lab.size) - np.repeat(group_start, np.diff(np.r_[group_start, lab.size]))
    salt = np.frombuffer(hashlib.blake2b(b"profile bands", digest_size=8 * FP_BANDS, key=secret,
                                         person=b"dpfed-fp-prof").digest(), dtype="<u8").astype(np.uint64)
    with np.errstate(over="ignore"):
        bare = _mix64((lab.astype(np.uint64) << np.uint64(32)) + occ.astype(np.uint64))
    tok = _mix64(bare ^ user_h[row])
    keys = _minhash_bands(X, tok, salt, PROFILE_ROWS)
    keys[nnz < PROFILE_MIN_ITEMS] = 0
    # a profile another user of the same dataset has, id aside (a catalogue of tied counts puts every
    # item in one bin: the profile is then just the number of items), names no one: under counter ids
    # unrelated people of that length would be taken for each other. (Ids are unique, so this also
    # covers every repeat of a whole set of bands.)
    users = np.flatnonzero(nnz > 0)
    if users.size:
        signature = np.bitwise_xor.reduceat(_mix64(bare ^ salt[0]), X.indptr[:-1][users])
        _, inverse, shared = np.unique(signature, return_inverse=True, return_counts=True)
        keys[users[shared[inverse] > 1]] = 0
    return keys


def _clean(dataset):
    X = dataset.X.tocsr().copy()
    X.sum_duplicates()
    X.eliminate_zeros()
    X.sort_indices()
    return X


#: A process-wide secret for fingerprints asked for without one (benchmarks, comparisons in memory):
#: never persisted, so nothing unkeyed is ever written.
_EPHEMERAL = secrets.token_bytes(SECRET_BYTES)

_FP_MEMO: dict[tuple[int, bytes], tuple[weakref.ref, PeopleFingerprint]] = {}

_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
_COUNTER = re.compile(r"(\D*?)(\d+)")
#: A number written with thousands separators (``141,764``, ``1 200 000``), as a spreadsheet exports it.
_GROUPED = re.compile(r"[+-]?\d{1,3}([,\s\u00a0\u202f]\d{3})+(\.\d+)?")


def canonical_item_id(item) -> str:
    """An item id as the fingerprint reads it: a number written another way is the same item
    (``0242``, ``242.0``, ``242`` and ``141,764`` for ``141764`` — a spreadsheet's export of an id
    column), so such a re-export is
    recognised; any other id as it is, without surrounding blanks. Two ids of one catalogue that only
    differ so are read as one item, which can only make two datasets look more alike (a larger
    charge, never a smaller one)."""
    text = str(item).strip()
    if _GROUPED.fullmatch(text):
        text = re.sub(r"[,\s\u00a0\u202f]", "", text)
    if not _NUMBER.fullmatch(text):
        return text
    value = float(text)
    if value.is_integer() and abs(value) < 2 ** 53:
        return str(int(value))
    return repr(value)



def people_fingerprint(dataset, secret: bytes | None = None) -> PeopleFingerprint:
    """Keyed MinHash/LSH fingerprint of the people in a dataset (module docstring): each user is the
    set of items they have; item ids are hashed under ``secret`` (the store's key; None: a secret
    of this process only). Vectorised over the sparse matrix: one pass over the stored entries per
    min-hash (~0.1 s per 10⁶ entries). Memoised per dataset object and secret."""
    secret = _EPHEMERAL if secret is None else bytes(secret)
    memo_key = (id(dataset), secret)
    hit = _FP_MEMO.get(memo_key)
    if hit is not None and hit[0]() is dataset:
        return hit[1]
    X = _clean(dataset)
    item_h = np.fromiter(
        (int.from_bytes(hashlib.blake2b(canonical_item_id(i).encode("utf-8"), digest_size=8, key=secret,
                                        person=b"dpfed-fp-item").digest(), "little")
         for i in np.asarray(dataset.item_ids).tolist()), dtype=np.uint64, count=X.shape[1])
    salt = np.frombuffer(hashlib.blake2b(b"bands", digest_size=8 * FP_BANDS, key=secret,
                                         person=b"dpfed-fp-band").digest(), dtype="<u8").astype(np.uint64)
    item_keys = _minhash_bands(X, item_h[X.indices], salt)
    _drop_uninformative(X, item_keys)
    shape_salt = np.frombuffer(hashlib.blake2b(b"shape bands", digest_size=8 * FP_BANDS, key=secret,
                                               person=b"dpfed-fp-band").digest(), dtype="<u8").astype(np.uint64)
    labels = _shape_labels(X, secret)
    labelled = X[:, np.flatnonzero(labels)]  # only items an untied count names: a user needs three of them
    shape_keys = _minhash_bands(labelled, labels[labels != 0][labelled.indices], shape_salt)
    _drop_uninformative(labelled, shape_keys)
    ids = _canonical_ids(dataset.user_ids)
    user_h = _user_hashes(ids, secret)
    keys = np.hstack([item_keys, shape_keys, _id_keys(ids, user_h), _profile_keys(X, user_h, secret)])
    fp = PeopleFingerprint(keys, np.asarray(dataset.entity_of_user, dtype=np.int32),
                           tuple(str(e) for e in dataset.entity_names), FP_VERSION)
    for k in [k for k, (ref, _) in _FP_MEMO.items() if ref() is None]:
        del _FP_MEMO[k]
    _FP_MEMO[memo_key] = (weakref.ref(dataset), fp)
    return fp


class _Transposed:
    """A dataset with its users and items exchanged: what a table read with its user and item columns
    swapped looks like read the right way round (the fields :func:`people_fingerprint` reads)."""

    def __init__(self, dataset) -> None:
        X = dataset.X.tocsc()
        self.X = X.T.tocsr()
        self.user_ids = np.asarray(dataset.item_ids)
        self.item_ids = np.asarray(dataset.user_ids)
        # each swapped-back user takes the entity of the first row it appears in (a table that loaded
        # holds each of its "users" in one entity)
        first = np.where(np.diff(X.indptr) > 0, X.indices[np.minimum(X.indptr[:-1], max(X.nnz - 1, 0))], 0)
        self.entity_of_user = np.asarray(dataset.entity_of_user)[first] if X.nnz else np.zeros(X.shape[1], int)
        self.entity_names = dataset.entity_names


def swapped_fingerprint(dataset, secret: bytes | None = None) -> PeopleFingerprint:
    """The fingerprint of the dataset with its users and items exchanged: matched against a stored
    account, it recognises that account's people in a table read with its user and item columns swapped
    (each person then an "item", protected as one item's column rather than as a user)."""
    return people_fingerprint(_Transposed(dataset), secret)


def legacy_fingerprint(dataset) -> PeopleFingerprint:
    """The version-1 fingerprint (unkeyed: tokens (item id, value rounded to 1e-6), public seeds),
    computed only to compare a dataset with version-1 entries of an older store."""
    X = _clean(dataset)
    item_h = np.fromiter((int.from_bytes(hashlib.blake2b(str(i).encode("utf-8"), digest_size=8).digest(), "little")
                          for i in np.asarray(dataset.item_ids).tolist()), dtype=np.uint64, count=X.shape[1])
    vals = np.round(X.data.astype(np.float64), 6) + 0.0  # -0.0 → 0.0
    tok = _mix64(item_h[X.indices] ^ _mix64(vals.view(np.uint64)))
    salt = np.array([0xD6E8FEB86659FD93 ^ (b + 1) for b in range(FP_BANDS)], dtype=np.uint64)
    return PeopleFingerprint(_minhash_bands(X, tok, salt), np.asarray(dataset.entity_of_user, dtype=np.int32),
                             tuple(str(e) for e in dataset.entity_names), LEGACY_FP_VERSION)


# ================================================================================ matching
@dataclass(frozen=True)
class PeopleMatch:
    """How the people of a new dataset match those of a stored one.

    similarity : matched / (users of both − matched), over fingerprinted users (Jaccard of the two
        populations). contained : the larger of the shares of each side's users matched.
    """

    similarity: float
    matched_new: int
    matched_stored: int
    entity_map: dict[str, list[str]]   # new entity → stored entities (charged for it)
    contained: float = 0.0


def match_people(new: PeopleFingerprint, stored: PeopleFingerprint) -> PeopleMatch:
    """Compare two fingerprints of the same version and key: a user of ``new`` matches the user of
    ``stored`` with whom it shares the most band keys (same band), when they share at least
    :data:`MIN_BANDS`. Vectorised (sort + searchsorted + unique)."""
    nb = new.keys.shape[1]
    # a band a user has no key in (a family that leaves them out) never matches
    held_new, held_st = new.keys != 0, stored.keys != 0
    valid_new, valid_st = held_new.any(axis=1), held_st.any(axis=1)
    if (not valid_new.any() or not valid_st.any() or stored.keys.shape[1] != nb
            or new.version != stored.version):
        return PeopleMatch(0.0, 0, 0, {}, 0.0)
    # tag each key with its band so equal keys of different bands never meet
    band = np.arange(nb, dtype=np.uint64)
    with np.errstate(over="ignore"):
        tag = band[None, :] * np.uint64(0x632BE59BD9B4E019)
    st = _mix64(stored.keys ^ tag)
    nw = _mix64(new.keys ^ tag)
    st_user = np.repeat(np.arange(stored.keys.shape[0]), nb).reshape(-1, nb)
    st_flat, st_u = st[held_st], st_user[held_st]
    order = np.argsort(st_flat, kind="stable")
    st_sorted, st_u = st_flat[order], st_u[order]
    # every stored user holding the same key in the same band is a candidate (a band key several
    # stored users share — near-identical item sets — must not hide any of them); a band key more
    # than MAX_BAND_SHARE stored users hold is generic and tells nothing
    left = np.searchsorted(st_sorted, nw, side="left")
    right = np.searchsorted(st_sorted, nw, side="right")
    width = np.where(held_new, right - left, 0)
    width[width > MAX_BAND_SHARE] = 0
    u_new = np.repeat(np.repeat(np.arange(nw.shape[0]), nb), width.ravel())
    starts = np.repeat(left.ravel(), width.ravel())
    offs = np.arange(starts.size) - np.repeat(np.cumsum(width.ravel()) - width.ravel(), width.ravel())
    partner_of_hit = st_u[starts + offs]
    # a user matches the stored user with whom it shares the most bands, if at least MIN_BANDS
    partner = np.full(nw.shape[0], -1, dtype=np.int64)
    if u_new.size:
        pairs, counts = np.unique(np.stack([u_new, partner_of_hit], axis=1), axis=0, return_counts=True)
        order = np.lexsort((-counts, pairs[:, 0]))           # per new user, the most shared bands first
        pairs, counts = pairs[order], counts[order]
        first = np.r_[True, pairs[1:, 0] != pairs[:-1, 0]]
        best, best_n = pairs[first], counts[first]
        ok = best_n >= MIN_BANDS
        partner[best[ok, 0]] = best[ok, 1]
    matched = partner >= 0
    m_new = int(matched.sum())
    m_st = int(np.unique(partner[matched]).size)
    n_new, n_st = int(valid_new.sum()), int(valid_st.sum())
    contained = max(m_new / n_new, m_st / n_st)
    m = min(m_new, m_st)
    similarity = m / max(n_new + n_st - m, 1)
    emap: dict[str, list[str]] = {}
    for h, name in enumerate(new.entity_names):
        sel = matched & (new.entity == h)
        if not sel.any():
            continue
        counts = np.bincount(stored.entity[partner[sel]], minlength=len(stored.entity_names))
        # every stored entity one of its users was found in: a re-export pooling a few people of each of
        # many entities is charged to all of them (a spurious match can only add to a charge)
        keep = np.flatnonzero(counts >= 1)
        emap[name] = [stored.entity_names[i] for i in keep[np.argsort(-counts[keep], kind="stable")]]
    return PeopleMatch(float(similarity), m_new, m_st, emap, float(contained))


def is_same_people(m: PeopleMatch) -> bool:
    """The account decision: enough of one side's people are in the other (containment either way,
    :data:`CONTAINMENT_THRESHOLD`) and at least :data:`MIN_MATCHED_USERS` of them."""
    return m.contained >= CONTAINMENT_THRESHOLD and min(m.matched_new, m.matched_stored) >= MIN_MATCHED_USERS


def keyed_key(secret: bytes, content_key: str) -> str:
    """The name a store gives a dataset's account: ``"dk-" + 40 hex digits`` of HMAC-SHA256 of its
    content key (:func:`~dpfed_core.privacy.budget_records.dataset_key`) under the store's secret. The content key alone would let whoever
    holds the store file (or a document naming the account) and every other row of the data test whether
    a person is in it: hash the table with and without that person and compare. Keyed, the same data has
    the same name in one store (and in every store sharing its secret) and unrelated names elsewhere."""
    return "dk-" + hmac.new(secret, content_key.encode("utf-8"), hashlib.sha256).hexdigest()[:40]

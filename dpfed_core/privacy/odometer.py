"""The privacy budget odometer: every release of a dataset is charged per entity against a
cap the data owner sets, and refused *before any noise is drawn* when it would pass the cap.

What is charged
    A *release* is one output computed from the private data with a privacy claim: a run (and each
    method it is compared with), each point (method, ε, seed) of a sweep, an audit. Its charge to
    entity h is the (ε_h, δ_h) its ledger guarantees for h (SPEC §3; for a planned release the
    requested (ε, δ), which the ledger never exceeds) and, where it can be derived, its ρ-zCDP
    (Gaussian mechanisms: ρ = Δ²/2σ²; pure ε-DP: ε²/2). (Entities hold disjoint users, so one
    entity's spend never touches another's budget.)

Composition (:func:`~dpfed_core.privacy.accounting.compose_releases`)
    An entity's spend is the smaller of two accountants at the cap's δ (or
    :data:`~dpfed_core.privacy.accounting.REFERENCE_DELTA` without a cap), each a privacy filter valid
    when the next ε is chosen after seeing the results: basic composition (Σε, Σδ ≤ δ/2; one sweep's
    points — planned together before any runs — form one non-adaptive batch composed by PLD) and zCDP
    (Σρ, ε at δ/2). Which one gave the charge is stated (``EntityBalance.accountant``).

Identity: the budget follows the people
    The key is a content fingerprint (:func:`dataset_key`: user ids, item ids, values, entities in
    canonical order): the same data under another file name or row order is the same dataset. The store
    names the account by that key under its secret (:meth:`BudgetOdometer.account_key`), never by the
    content key itself, which would tell whoever holds the store and the other rows who is in the data. Any
    other view of the same people — a re-export, another reading of the same file — has another key,
    so every dataset also gets a keyed *people fingerprint*
    (:mod:`dpfed_core.privacy.fingerprint`: which items each user has, the same read from the data's shape
    without the item ids, and user ids that are not counters — MinHash/LSH and hashes under a secret kept
    beside the store) and a new dataset that holds enough of a stored account's people, or is made
    enough of them (containment either way, :func:`~dpfed_core.privacy.fingerprint.is_same_people`),
    becomes its *alias*: it is charged to the same account, its entities mapped onto the stored one's
    by where their users are. The match is stated (``BudgetOdometer.identity``). Threat model and
    measured table: docs/PRIVACY.md.

Policy (documented in the README's "Privacy budget" section)
    * No cap set: releases are charged and listed, never refused. ``set_cap`` sets a per-entity cap
      (ε, δ) for a dataset; ``ε = inf`` removes it. Lowering is free; *raising* (more budget, or
      removing the cap) needs ``confirm_raise=True``; every change is logged (``cap_changes``).
    * The check "spend after these releases ≤ cap" for every entity and the insertion of the charge
      are one ``BEGIN IMMEDIATE`` transaction: concurrent sessions cannot overspend together.
    * A release is charged from the moment it is reserved, whether it then succeeds or fails (a
      failed run may already have released something). The one exception: a run that fails
      *before its first draw* — its ledgers hold no row, and every mechanism records its row before
      it draws — gives its reservation back (status ``withdrawn``, the evidence noted). Nothing
      else is ever refunded, and deleting a run from the history does not touch the odometer.
    * Every release, settlement, withdrawal and cap change records who made it (``user@host``).
    * **Simulation** releases (noise reproducible from the seed, "no privacy claim") are recorded
      with their requested ε and flagged, and not charged.
    * **Non-private** releases (ε = ∞: raw data or exact statistics leave an entity, e.g. the
      ``central``, ``kmeans`` or ``popularity`` references, an ε = inf sweep point, an audit) are
      refused on a dataset with a finite cap unless explicitly allowed (``allow_non_private``). An
      allowed one is recorded with ε = ∞ for the entities it touched and counted apart: those
      entities' DP spend stays finite (so later DP releases remain bounded by the cap) while the
      balance says their overall guarantee is void (``n_non_private > 0``).

Refusals name what fixes them through placeholders (:class:`BudgetRefused`): the CLI renders them as
flags, the dashboard as its controls, never one inside the other.

This module holds the store operations (:class:`BudgetOdometer`); the values they take and return —
plans, balances, reservations, identities, the dataset key, the refusal — are in
:mod:`dpfed_core.privacy.budget_records`.
"""
from __future__ import annotations

import contextlib
import json
import math
import os
import uuid
from pathlib import Path
from typing import Callable, Iterator, Sequence

import numpy as np

from dpfed_core.data.dataset import FederatedDataset
from dpfed_core.errors import ConfigError
# The people fingerprint lives in its own module (keyed: the store is no membership oracle); its
# names are re-exported here for callers of the odometer.
from dpfed_core.privacy.fingerprint import (  # noqa: F401
    BANDS_OF_VERSION, CONTAINMENT_THRESHOLD, FP_BANDS, FP_ROWS, FP_VERSION, ITEM_SETS_FP_VERSION, LEGACY_FP_VERSION,
    MIN_BANDS, MIN_MATCHED_USERS, FingerprintKeyError, PeopleFingerprint, PeopleMatch, is_same_people, legacy_fingerprint,
    match_people, people_fingerprint, swapped_fingerprint)
from dpfed_core.privacy.statement import epsilon_left as _cap, epsilon_that_holds as _spent  # a cap: down
from dpfed_core.privacy.store import Store, StoreError, actor, now_iso  # noqa: F401  (StoreError re-exported)
# The values the odometer takes and returns live in budget_records; they are imported here too, so
# that a caller gets the odometer and its plans, balances and refusal from one module.
from dpfed_core.privacy.budget_records import (  # noqa: F401
    CAP_REL_TOL, CLI_CONTROLS, PYTHON_CONTROLS, RECOGNISED_BY, BudgetRefused, EntityBalance,
    Identity, PlannedRelease, Reservation, dataset_key, keyed_key, mapped_charge_rows, recover_killed)

# ================================================================================ odometer
def _fmt(x: float) -> str:
    return "∞" if math.isinf(x) else f"{x:.4g}"


def _over_lines(over: list) -> str:
    """The entities a refused charge would take over the cap, with their spend before and after;
    entities with the same numbers share one line (30 hospitals, one sentence), at most 5 lines."""
    groups: dict[tuple, list[str]] = {}
    for e, b, a, _ in over:
        groups.setdefault((round(b, 9), round(a, 9)), []).append(e)
    lines = []
    for (b, a), ents in list(groups.items())[:5]:
        who = (f"entity {ents[0]!r}" if len(ents) == 1 else
               f"{len(ents)} entities ({', '.join(repr(x) for x in ents[:3])}{', …' if len(ents) > 3 else ''})")
        lines.append(f"{who}: spent ε = {_spent(b)}, this would bring it to ε = {_spent(a)}")
    return "; ".join(lines) + (f"; … and {len(groups) - 5} more groups" if len(groups) > 5 else "")


def _stored_fingerprint(row) -> PeopleFingerprint:
    """A fingerprint as the store holds it (a row of ``fingerprints`` joined with its dataset's entities)."""
    return PeopleFingerprint(
        np.frombuffer(row["keys"], dtype=np.uint64).reshape(int(row["n_users"]), int(row["bands"])),
        np.frombuffer(row["entity"], dtype=np.int32), tuple(json.loads(row["entities"])), int(row["version"]))


#: The secret naming a dataset in a store that has none yet (a read never creates it): one per process, so
#: the name finds no account (:meth:`BudgetOdometer.names_no_account`).
_NO_SECRET = os.urandom(32)


class BudgetOdometer:
    """Per-dataset, per-entity privacy budget kept in the store file.

    Parameters
    ----------
    store : a :class:`Store`, a path, or None (:func:`~dpfed_core.privacy.store.default_store_path`).
    """

    def __init__(self, store: Store | str | os.PathLike | None = None) -> None:
        self.store = store if isinstance(store, Store) else Store(store)
        # identities of datasets a read-only store could not register (matched in memory)
        self._transient: dict[str, Identity] = {}

    @property
    def path(self):
        return self.store.path

    # ------------------------------------------------------------------ datasets, identity, caps
    def register(self, dataset: FederatedDataset, key: str | None = None) -> str:
        """Record the dataset (idempotent; a new one is matched against the stored datasets' people)
        and return its key."""
        secret = self._secret(create=True)
        key = self._charged_key(key, secret, dataset)
        with self.store.write() as con:
            self._upsert_dataset(con, key, dataset, secret)
        return key

    def account_key(self, dataset: FederatedDataset | str, *, create: bool = True) -> str:
        """The name this store gives the dataset's account (a name given is returned as it is): its content
        key (:func:`dataset_key`) keyed with the store's secret (:func:`keyed_key`), the secret created on
        first use. The same data has the same name in every process using this store, another name in a
        store with another secret; the content key itself is never written anywhere. ``create=False`` (a
        read): a store with no secret yet is left as it is and the name is one of this process only
        (:meth:`names_no_account`), which finds nothing — nothing was charged to any account yet."""
        if isinstance(dataset, str):
            return dataset
        return self._named(self._secret(create=create), dataset)

    @staticmethod
    def _named(secret: bytes | None, dataset: FederatedDataset) -> str:
        """The dataset's account name under ``secret``; under no secret (none yet, or a store that cannot be
        written), a name of this process only."""
        return keyed_key(_NO_SECRET if secret is None else secret, dataset_key(dataset))

    @staticmethod
    def names_no_account(dataset: FederatedDataset, key: str) -> bool:
        """Was ``key`` named while the store had no secret (:meth:`account_key` with ``create=False``)? Such a
        name finds no account; a charge given it names the account under the store's secret instead."""
        return key == BudgetOdometer._named(None, dataset)

    def filing_key(self, dataset: FederatedDataset, key: str | None = None) -> str:
        """The account a result of ``dataset`` is kept under: the one its charge registered (see
        :meth:`_charged_key`), the store's secret created if this is the first write."""
        return self._charged_key(key, self._secret(create=True), dataset)

    def _charged_key(self, key: str | None, secret: bytes | None, dataset: FederatedDataset) -> str:
        """The key a charge registers: the one given, unless none was or it was named before the store had
        a secret (it would charge an account no later process can name)."""
        return self._named(secret, dataset) if key is None or self.names_no_account(dataset, key) else key

    # ------------------------------------------------------------------ the fingerprint secret
    @property
    def secret_path(self) -> Path:
        """The file holding this store's fingerprint secret (beside the store, never inside it)."""
        from dpfed_core.privacy.fingerprint import secret_path

        return secret_path(self.store.path)

    def _secret(self, create: bool) -> bytes | None:
        """The store's fingerprint secret: read from :attr:`secret_path`; created (mode 0600) on first
        use when ``create`` and the store has no keyed fingerprint yet. A store whose fingerprints were
        keyed with a secret that is now missing or different is refused (a new secret would make every
        stored account unrecognisable: re-exports would get a fresh budget). None: no secret yet and
        ``create`` is False (nothing keyed can be compared)."""
        from dpfed_core.privacy.fingerprint import create_secret, read_secret, secret_id

        path = self.secret_path
        secret = read_secret(path)
        with self.store.read() as con:
            row = con.execute("SELECT value FROM meta WHERE name = 'fingerprint_key_id'").fetchone()
            n_keyed = con.execute("SELECT COUNT(*) FROM fingerprints WHERE version >= ?",
                                  (ITEM_SETS_FP_VERSION,)).fetchone()[0]
            # every account is named under the secret: a store holding one had it, even with no row saying so
            n_named = con.execute("SELECT COUNT(*) FROM datasets WHERE key LIKE 'dk-%'").fetchone()[0]
        recorded = row[0] if row else None
        if secret is not None:
            if recorded is not None and secret_id(secret) != recorded:
                raise FingerprintKeyError(
                    f"the fingerprint key {path} is not the key of the store {self.path} (its fingerprints were "
                    f"made with key {recorded}); restore this store's own key from the backup of the store and its "
                    "key, or choose another store with --store")
            if recorded is None and create and not self.store.readonly:
                with self.store.write() as con:
                    con.execute("INSERT OR IGNORE INTO meta (name, value) VALUES ('fingerprint_key_id', ?)",
                                (secret_id(secret),))
            return secret
        if recorded is not None or n_keyed or n_named:
            from dpfed_core.privacy.store import STORE_ENV

            raise FingerprintKeyError(
                f"the fingerprint key of the store {self.path} is missing (expected at {path}, key "
                f"{recorded or 'not recorded'}): the store's accounts are named with it, so without it no data can be "
                "found in the store, and a new key would give the people already charged a fresh budget (none is "
                "made). Restore the key file from the backup of the store and its key (they are protected together, "
                f"like the data); or point --store or {STORE_ENV} to a new store, which starts an empty budget — "
                "charging a new store does not reset the budget these data already spent")
        if not create or self.store.readonly:
            return None
        secret = create_secret(path)
        with self.store.write() as con:
            con.execute("INSERT OR IGNORE INTO meta (name, value) VALUES ('fingerprint_key_id', ?)",
                        (secret_id(secret),))
            got = con.execute("SELECT value FROM meta WHERE name = 'fingerprint_key_id'").fetchone()[0]
        if got != secret_id(secret):  # another session keyed the store first with another file
            raise FingerprintKeyError(f"the store {self.path} was keyed by another session with another key file "
                                      f"than {path}; retry")
        return secret

    def _matches(self, con, key: str, dataset: FederatedDataset, secret: bytes | None
                 ) -> list[tuple[str, PeopleMatch]]:
        """Every stored account whose people the dataset holds or is made of (:func:`is_same_people`),
        the most users matched first, comparing keyed fingerprints with the dataset's keyed one and an
        older store's unkeyed (version 1) fingerprints with its version-1 one."""
        found = []
        fp_new = people_fingerprint(dataset, secret) if secret is not None else None
        fp_old = None
        rows = con.execute("SELECT f.*, d.entities AS entities FROM fingerprints f JOIN datasets d ON d.key = "
                           "f.dataset_key WHERE f.dataset_key != ? AND d.alias_of IS NULL", (key,)).fetchall()
        for row in rows:  # the account's own dataset only (aliases point to it)
            version = int(row["version"])
            if version in BANDS_OF_VERSION:
                if fp_new is None:
                    continue
                # a keyed entry of an older version is compared on the bands it holds (and rewritten with
                # every band when its data is next charged or capped, below)
                fp = fp_new.as_version(version)
            elif version == LEGACY_FP_VERSION:
                fp = fp_old = fp_old or legacy_fingerprint(dataset)
            else:
                continue
            m = match_people(fp, _stored_fingerprint(row))
            if is_same_people(m):
                found.append((row["dataset_key"], m))
        if not found and fp_new is not None:
            self._refuse_swapped(con, dataset, secret, [r for r in rows if int(r["version"]) == FP_VERSION])
        found.sort(key=lambda f: (min(f[1].matched_new, f[1].matched_stored), f[1].contained), reverse=True)
        return found

    def _refuse_swapped(self, con, dataset: FederatedDataset, secret: bytes, rows) -> None:
        """Refuse a table whose items are the people of a stored account: read with its user and item
        columns swapped, each person is an "item" whose column the run would protect as one item's —
        the noise sized to one user's row, the people's own cap never asked. Nothing is registered."""
        if not rows:
            return
        fp = swapped_fingerprint(dataset, secret)
        for row in rows:
            if is_same_people(match_people(fp, _stored_fingerprint(row))):
                raise ConfigError(f"{dataset.name}: its user and item columns look swapped — its items are the people "
                                  f"of the stored dataset {self._name(con, row['dataset_key'])!r}, read as items; a run "
                                  "would protect each of them as one item, not as a person. Swap the user and item "
                                  "columns (user_col, item_col)", param="user_col")

    def _best_match(self, con, key: str, dataset: FederatedDataset, secret: bytes | None
                    ) -> tuple[str, PeopleMatch] | None:
        """The stored account the dataset is charged to: of :meth:`_matches`, the one with the most
        users matched."""
        found = self._matches(con, key, dataset, secret)
        return found[0] if found else None

    def _also_held(self, con, key: str, dataset: FederatedDataset, secret: bytes | None,
                   account: str, found: list[tuple[str, PeopleMatch]] | None = None) -> list[Identity]:
        """The other stored accounts whose people the dataset holds besides its own ``account``: a table
        that adds made-up (or other) users to a capped account's people is matched to whichever account
        has more users matched, and would otherwise release the capped people's data uncharged. Each
        is checked against its own cap and charged too, its entities mapped as an alias's would be.
        ``found``: :meth:`_matches` as this transaction already computed it (a dataset registered in it)."""
        out = []
        for acct, m in (self._matches(con, key, dataset, secret) if found is None else found):
            if acct == account:
                continue
            out.append(Identity(key, acct, acct, self._name(con, acct), m.contained,
                                self._alias_map(con, (acct, m), dataset)))
        return out

    @staticmethod
    def _alias_map(con, best: tuple[str, PeopleMatch], dataset: FederatedDataset) -> dict[str, list[str]]:
        """Each entity of a re-export → the account's entities its people were matched to. An entity none
        of whose users were recognised (a few people whose rows were thinned or changed past recognition,
        or people the account never saw) may hold any of the account's people: charged to every entity of
        the account and to its own name, never to a fresh account that would start from zero. An entity
        with no user at all holds no one: charged under its own name only."""
        account = json.loads(con.execute("SELECT entities FROM datasets WHERE key = ?", (best[0],)).fetchone()[0])
        users = np.bincount(np.asarray(dataset.entity_of_user, dtype=np.int64), minlength=dataset.n_entities)
        # a declared entity with no user at all holds no one: its own name only (an all-zero contribution
        # charges none of the account's people)
        return {str(e): best[1].entity_map.get(str(e)) or (sorted({*map(str, account), str(e)}) if users[h] else [str(e)])
                for h, e in enumerate(dataset.entity_names)}

    def _upsert_dataset(self, con, key: str, dataset: FederatedDataset, secret: bytes | None
                        ) -> list[tuple[str, PeopleMatch]] | None:
        """Register the dataset (a new one matched to the stored accounts: the matches are returned, None
        for a dataset already known)."""
        t = now_iso()
        known = con.execute("SELECT key FROM datasets WHERE key = ?", (key,)).fetchone() is not None
        con.execute(
            "INSERT INTO datasets (key, name, entities, first_seen, last_seen) VALUES (?, ?, ?, ?, ?) "
            "ON CONFLICT(key) DO UPDATE SET name = excluded.name, last_seen = excluded.last_seen",
            (key, str(dataset.name), json.dumps([str(e) for e in dataset.entity_names]), t, t))
        self._transient.pop(key, None)  # registered from here on: the store's row is its identity
        found = None
        if not known:
            found = self._matches(con, key, dataset, secret)
            best = found[0] if found else None
            if best is not None:
                con.execute("UPDATE datasets SET alias_of = ?, similarity = ?, entity_map = ? WHERE key = ?",
                            (best[0], best[1].contained, json.dumps(self._alias_map(con, best, dataset)), key))
        row = con.execute("SELECT version FROM fingerprints WHERE dataset_key = ?", (key,)).fetchone()
        if secret is not None and (row is None or int(row["version"]) != FP_VERSION):
            # a new dataset, or the one-time rewrite of an older store's fingerprint (unkeyed, or keyed
            # item sets only) when its data is next charged or capped
            fp = people_fingerprint(dataset, secret)
            con.execute("INSERT OR REPLACE INTO fingerprints (dataset_key, version, n_users, bands, keys, entity) "
                        "VALUES (?, ?, ?, ?, ?, ?)",
                        (key, FP_VERSION, fp.n_users, fp.keys.shape[1], fp.keys.astype("<u8").tobytes(),
                         fp.entity.astype("<i4").tobytes()))
        return found

    def unkeyed_fingerprints(self) -> int:
        """How many datasets of the store still have an unkeyed (version 1) fingerprint — each of
        them still answers "is this person in the data?" for anyone holding the store file, until
        its data is next charged or capped (one-time rekey)."""
        with self.store.read() as con:
            return int(con.execute("SELECT COUNT(*) FROM fingerprints WHERE version = ?",
                                   (LEGACY_FP_VERSION,)).fetchone()[0])

    def _identity(self, con, key: str) -> Identity:
        transient = self._transient.get(key)
        if transient is not None:
            return transient
        row = con.execute("SELECT alias_of, similarity, entity_map FROM datasets WHERE key = ?", (key,)).fetchone()
        if row is None or row["alias_of"] is None:
            return Identity(key, key, None, None, None, None)
        name = con.execute("SELECT name FROM datasets WHERE key = ?", (row["alias_of"],)).fetchone()
        return Identity(key, row["alias_of"], row["alias_of"], name[0] if name else None, float(row["similarity"]),
                        json.loads(row["entity_map"]) if row["entity_map"] else None)

    def identity(self, dataset: FederatedDataset | str) -> Identity:
        """The account a dataset is charged to (itself, or the stored dataset of the same people)."""
        key = self._key_of(dataset)
        with self.store.read() as con:
            return self._identity(con, key)

    def _require_dataset(self, con, key: str) -> dict:
        row = con.execute("SELECT * FROM datasets WHERE key = ?", (key,)).fetchone()
        if row is None:
            raise ConfigError(f"the store {self.path} has no dataset {key}; load the data once with this store "
                              "(data=…) so that it is registered", param="data")
        return dict(row)

    def set_cap(self, dataset: FederatedDataset | str, epsilon: float, delta: float = 1e-5, *,
                confirm_raise: bool = False, refuse_below_spent: bool = True, note: str = "") -> str:
        """Set the per-entity cap (ε, δ) of a dataset's account (a dataset or its key; a re-export
        sets the cap of the people's account). ``ε = inf`` removes it.

        Lowering is free; *raising* it (a larger ε or δ, or removing a cap) is refused unless
        ``confirm_raise``. A cap below what an entity has already spent is refused (spent budget is
        never refunded; the CLI and the dashboard alike) unless ``refuse_below_spent=False``. Every
        change is logged in ``cap_changes`` (:meth:`cap_changes`) with who made it (user@host).
        Returns the account's key."""
        try:
            epsilon, delta = float(epsilon), float(delta)
        except (TypeError, ValueError):
            raise ConfigError(f"the budget cap must be numbers, got ε={epsilon!r}, δ={delta!r}") from None
        if math.isnan(epsilon) or epsilon <= 0:
            raise ConfigError(f"the budget cap ε must be positive (inf removes the cap), got {epsilon}",
                              param="epsilon")
        if math.isnan(delta) or not 0 <= delta < 1e-2:
            # As for a run's δ: δ ≥ 1e-2 lets a mechanism publish a record outright.
            # 0 only with ε = ∞ (the cap removed): a finite cap needs δ > 0 (below)
            span = "(0, 0.01)" if math.isfinite(epsilon) else "[0, 0.01)"
            raise ConfigError(f"the budget cap δ must be in {span}, got {delta}; a usual cap is 1e-5",
                              param="delta")
        if delta == 0 and math.isfinite(epsilon):
            # spends are composed at the cap's δ (zCDP's ε needs δ > 0, every Gaussian release has δ > 0):
            # a pure ε-DP cap would be shown as δ = 0 and enforced at another δ
            raise ConfigError("the budget cap δ must be above 0: every spend is stated and checked at the cap's δ, "
                              "and no accountant here states one at δ = 0 (a Gaussian release's δ is above 0). "
                              "Give a δ such as 1e-5", param="delta")
        secret = None if isinstance(dataset, str) else self._secret(create=True)
        with self.store.write() as con:
            if isinstance(dataset, str):
                key = dataset
                self._require_dataset(con, key)
            else:
                key = self._named(secret, dataset)
                self._upsert_dataset(con, key, dataset, secret)
            account = self._identity(con, key).account
            old = con.execute("SELECT epsilon, delta FROM caps WHERE dataset_key = ?", (account,)).fetchone()
            old_e = math.inf if old is None else float(old["epsilon"])
            old_d = math.inf if old is None or math.isinf(old_e) else float(old["delta"])
            first = math.isinf(old_e)
            raised = (not first) and (epsilon > old_e * (1 + CAP_REL_TOL) or delta > old_d * (1 + CAP_REL_TOL))
            if raised and not confirm_raise:
                raise BudgetRefused(
                    f"refused: this raises the budget cap of {self._name(con, account)!r} from ε = {_cap(old_e)}, "
                    f"δ = {old_d:.3g} to ε = {_cap(epsilon)}, δ = {delta:.3g} per entity (more budget for the same "
                    f"people). A cap is lowered freely but raised only on purpose: confirm with {{confirm_raise}}",
                    param="confirm_raise")
            if refuse_below_spent and math.isfinite(epsilon):
                over = [b for b in self._balance(con, account, [], epsilon, delta) if b.spent_epsilon > epsilon * (1 + CAP_REL_TOL)]
                if over:
                    top = max(over, key=lambda b: b.spent_epsilon)
                    # the spend is composed at the new cap's δ: a smaller δ than the current one states the same
                    # releases at a larger ε than `budget show` did, which must not read as a contradiction
                    at = (f" at this cap's δ = {delta:.3g} (the current cap's δ = {old_d:.3g} states a smaller spend: a "
                          "smaller δ states the same releases at a larger ε)" if math.isfinite(old_d) and delta < old_d
                          else f" at this cap's δ = {delta:.3g}")
                    raise BudgetRefused(
                        f"refused: a cap of ε = {_cap(epsilon)} is below what is already spent ({len(over)} "
                        f"entit{'y has' if len(over) == 1 else 'ies have'} spent more, up to ε = "
                        f"{_spent(top.spent_epsilon)} by {top.entity!r}{at}); spent budget is never refunded. Choose a "
                        f"cap of at least {_spent(top.spent_epsilon)}"
                        + (f", or a δ nearer {old_d:.3g}" if math.isfinite(old_d) and delta < old_d else ""),
                        param="epsilon")
            con.execute("INSERT INTO caps (dataset_key, epsilon, delta, set_at) VALUES (?, ?, ?, ?) "
                        "ON CONFLICT(dataset_key) DO UPDATE SET epsilon = excluded.epsilon, "
                        "delta = excluded.delta, set_at = excluded.set_at", (account, epsilon, delta, now_iso()))
            con.execute("INSERT INTO cap_changes (dataset_key, old_epsilon, old_delta, new_epsilon, new_delta, raised, "
                        "changed_at, note, actor) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        (account, None if first else old_e, None if first else old_d, epsilon, delta, int(raised),
                         now_iso(), note or (f"set through the re-export {key}" if account != key else ""), actor()))
        return account

    def cap_changes(self, dataset: FederatedDataset | str) -> list[dict]:
        """Every change of the account's cap, newest first: old and new (ε, δ), raised, when."""
        key = self._key_of(dataset)
        with self.store.read() as con:
            account = self._identity(con, key).account
            return [dict(r) for r in con.execute("SELECT * FROM cap_changes WHERE dataset_key = ? ORDER BY id DESC",
                                                 (account,))]

    @staticmethod
    def _name(con, key: str) -> str:
        row = con.execute("SELECT name FROM datasets WHERE key = ?", (key,)).fetchone()
        return row[0] if row else key

    def cap(self, key: str) -> tuple[float, float]:
        """(ε, δ) cap per entity of the dataset's account; (inf, inf) when none is set."""
        with self.store.read() as con:
            return self._cap(con, self._identity(con, key).account)

    @staticmethod
    def _cap(con, key: str) -> tuple[float, float]:
        row = con.execute("SELECT epsilon, delta FROM caps WHERE dataset_key = ?", (key,)).fetchone()
        if row is None or math.isinf(row["epsilon"]):
            return math.inf, math.inf
        return float(row["epsilon"]), float(row["delta"])

    def datasets(self) -> list[dict]:
        """Every dataset in the store: key, name, entities, first/last seen, cap, alias_of, similarity."""
        with self.store.read() as con:
            rows = [dict(r) for r in con.execute("SELECT * FROM datasets ORDER BY last_seen DESC")]
            for r in rows:
                r["entities"] = json.loads(r["entities"])
                r["entity_map"] = json.loads(r["entity_map"]) if r.get("entity_map") else None
                r["cap_epsilon"], r["cap_delta"] = self._cap(con, r.get("alias_of") or r["key"])
        return rows

    # ------------------------------------------------------------------ balances
    @staticmethod
    def _group(con, account: str) -> list[str]:
        return [account, *(r[0] for r in con.execute("SELECT key FROM datasets WHERE alias_of = ?", (account,)))]

    def _entries(self, con, account: str) -> dict[str, list]:
        """entity → [list of ReleaseCharge (finite), n releases, n non-private] over charged releases
        of the account (its own dataset and every re-export of the same people)."""
        from dpfed_core.privacy.accounting import ReleaseCharge

        keys = self._group(con, account)
        acc: dict[str, list] = {}
        q = ("SELECT c.entity AS entity, c.epsilon AS eps, c.delta AS dlt, c.rho AS rho, c.gaussian AS gauss, "
             "r.batch AS batch FROM charges c JOIN releases r ON r.id = c.release_id "
             f"WHERE r.dataset_key IN ({', '.join('?' * len(keys))}) AND r.simulation = 0 AND r.status != 'withdrawn'")
        for r in con.execute(q, keys):
            a = acc.setdefault(r["entity"], [[], 0, 0])
            a[1] += 1
            if math.isinf(r["eps"]):
                a[2] += 1
            else:
                a[0].append(ReleaseCharge(r["eps"], r["dlt"], r["rho"], bool(r["gauss"]), r["batch"]))
        return acc

    @staticmethod
    def _plan_entries(plans: Sequence[PlannedRelease], batch_id: str, entity_map=None,
                      every_entity: bool = False) -> dict[str, list]:
        """entity (account's names) → ReleaseCharges of planned (charged) releases; ``every_entity``:
        an entity only a non-private charge (ε = ∞) touches is listed too, with no finite charge."""
        from dpfed_core.privacy.accounting import ReleaseCharge

        out: dict[str, list] = {}
        for i, p in enumerate(plans):
            if p.simulation:
                continue
            rows = mapped_charge_rows(i, {e: (c[0], c[1], p.rho, p.gaussian) for e, c in p.charges.items()}, entity_map)
            for _, ent, eps, dlt, rho, gauss in rows:
                if math.isinf(eps):
                    if every_entity:
                        out.setdefault(ent, [])
                    continue
                out.setdefault(ent, []).append(ReleaseCharge(eps, dlt, rho, bool(gauss), batch_id if p.batch else None))
        return out

    def _balance(self, con, account: str, names: Sequence[str], cap_e: float, cap_d: float) -> list[EntityBalance]:
        from dpfed_core.privacy.accounting import REFERENCE_DELTA, compose_releases

        row = con.execute("SELECT entities FROM datasets WHERE key = ?", (account,)).fetchone()
        own = json.loads(row["entities"]) if row else list(names)
        entries = self._entries(con, account)
        dref = cap_d if math.isfinite(cap_e) and cap_d > 0 else REFERENCE_DELTA
        out = []
        for e in dict.fromkeys([*own, *entries]):
            ent, n, n_np = entries.get(e, [[], 0, 0])
            c = compose_releases(ent, dref)
            out.append(EntityBalance(e, c.epsilon, c.basic_delta, cap_e, cap_d, n, n_np, c.basic_epsilon,
                                     c.tight_epsilon, c.accountant, dref if ent else 0.0))
        return out

    def balance(self, dataset: FederatedDataset | str) -> list[EntityBalance]:
        """Spent / cap / remaining per entity of the dataset's account (its entities first, in their
        order; a re-export shows the account's entities)."""
        key = self._key_of(dataset)
        with self.store.read() as con:
            account = self._identity(con, key).account
            cap_e, cap_d = self._cap(con, account)
            return self._balance(con, account, [] if isinstance(dataset, str) else list(dataset.entity_names),
                                 cap_e, cap_d)

    def preview(self, dataset: FederatedDataset, plans: Sequence[PlannedRelease], key: str | None = None) -> dict:
        """What ``plans`` would charge, without charging: ``{"cap_epsilon", "cap_delta", "delta" (at which
        releases compose), "spend" (largest increase of an entity's ε; ∞ when a plan is non-private),
        "dp_spend" (the same over the DP releases alone), "left" (smallest ε left before among the entities
        the plans touch, inf without cap), "after" (largest ε after; ∞ when non-private), "dp_after",
        "fits" (charged as it is: no entity would pass the cap and, under a cap, nothing non-private),
        "dp_fits" (no entity would pass the cap), "refused_unless_allowed" (non-private under a cap),
        "binding_spend" / "binding_left" (the increase and the ε left of the entity that would end nearest
        the cap: releases compose, so it may spend less than a fresh entity),
        "non_private", "accountant", "delta_exceeded" (an ε of ∞ because basic composition's Σδ would pass
        half the budget's δ while zCDP has no ρ for some release), "identity"}``."""
        key = key or self._key_of(dataset)
        with self.store.read() as con:
            ident = self._identity(con, key)
            emap = ident.entity_map
            if ident.alias_of is not None and emap:
                # a re-export whose entities were matched to the account's by their people: which of the
                # account's entities holds them is the match's finding, never stated — a dry run of a few
                # records would say where each person is (also by naming its entity after a guessed one:
                # a right guess maps to its own name). The preview reads the account as a whole (every
                # entity: an upper bound of the charge); the charge itself follows the match.
                emap = self._whole_account_map(con, ident.account, emap)
            out = self._preview_account(con, ident.account, emap, plans)
            secret = self._secret(create=False) if any(not p.simulation for p in plans) else None
            others = self._also_held(con, key, dataset, secret, ident.account) if secret is not None else []
            for o in others:  # other accounts whose people the data holds: charged too, each by its cap
                mine = self._preview_account(con, o.account, self._whole_account_map(con, o.account, o.entity_map),
                                             plans)
                if (not mine["dp_fits"] and out["dp_fits"]) or (mine["dp_fits"] == out["dp_fits"]
                                                                and mine["dp_after"] > out["dp_after"]):
                    for k in ("spend", "dp_spend", "after", "dp_after", "binding_spend", "binding_left",
                              "cap_epsilon", "cap_delta", "delta", "accountant"):
                        out[k] = mine[k]  # the account that binds states the figures
                out["left"] = min(out["left"], mine["left"])
                for k in ("fits", "dp_fits"):
                    out[k] = out[k] and mine[k]
                out["refused_unless_allowed"] = out["refused_unless_allowed"] or mine["refused_unless_allowed"]
                out["delta_exceeded"] = out["delta_exceeded"] or mine["delta_exceeded"]
        identity = ident.describe()
        if others:
            also = ", ".join(repr(o.alias_name) for o in others)
            plural = len(others) > 1
            also = (f"also holds people of the stored dataset{'s' if plural else ''} {also}: charged to "
                    f"{'their budgets' if plural else 'its budget'} too")
            identity = f"{identity}; {also}" if identity else f"{also} ({RECOGNISED_BY})"
        out["identity"] = identity
        return out

    def _whole_account_map(self, con, account: str, emap: dict | None) -> dict | None:
        """Every entity of a re-export mapped to every entity of the account (see :meth:`preview`)."""
        if not emap:
            return emap
        every = sorted({*json.loads(self._require_dataset(con, account)["entities"]),
                        *(x for v in emap.values() for x in v)})
        return {k: every for k in emap}

    def _preview_account(self, con, account: str, emap: dict | None, plans: Sequence[PlannedRelease]) -> dict:
        """:meth:`preview`'s figures for one account, its entities named by ``emap``."""
        from dpfed_core.privacy.accounting import REFERENCE_DELTA, basic_delta_exceeded, compose_releases

        cap_e, cap_d = self._cap(con, account)
        entries = self._entries(con, account)
        dref = cap_d if math.isfinite(cap_e) and cap_d > 0 else REFERENCE_DELTA
        # ε left is read for every entity a plan touches, one only a non-private release touches included
        new = self._plan_entries(plans, "planned", emap, every_entity=True)
        charged = [p for p in plans if not p.simulation]
        non_private = any(p.non_private for p in charged)
        spend, after_max, left_min, acct = 0.0, 0.0, math.inf, "none"
        bind_spend, bind_left = 0.0, math.inf  # of the entity that would end nearest the cap (the one that binds)
        delta_exceeded = False  # an ∞ that comes from basic composition's δ, not from a non-private release
        for e, add in new.items():
            cur = entries.get(e, [[], 0, 0])[0]
            before = compose_releases(cur, dref)
            after = compose_releases([*cur, *add], dref)
            delta_exceeded = delta_exceeded or (math.isinf(after.epsilon) and basic_delta_exceeded(after, dref))
            if after.epsilon - before.epsilon >= spend:
                spend, acct = after.epsilon - before.epsilon, after.accountant
            if after.epsilon >= after_max:
                after_max, bind_spend = after.epsilon, after.epsilon - before.epsilon
                bind_left = max(cap_e - before.epsilon, 0.0) if math.isfinite(cap_e) else math.inf
            if math.isfinite(cap_e):
                left_min = min(left_min, max(cap_e - before.epsilon, 0.0))
        dp_fits = (not math.isfinite(cap_e)) or after_max <= cap_e * (1 + CAP_REL_TOL)
        # a non-private release charges ε = ∞: on a capped dataset it is refused unless explicitly allowed
        refused_unless_allowed = non_private and math.isfinite(cap_e)
        return {"cap_epsilon": cap_e, "cap_delta": cap_d, "delta": dref,
                "spend": math.inf if non_private else spend, "dp_spend": spend,
                "after": math.inf if non_private else after_max, "dp_after": after_max, "left": left_min,
                "binding_spend": bind_spend, "binding_left": bind_left,
                "fits": dp_fits and not refused_unless_allowed, "dp_fits": dp_fits,
                "refused_unless_allowed": refused_unless_allowed, "non_private": non_private, "accountant": acct,
                "simulation": bool(plans) and not charged, "n_releases": len(plans),
                "delta_exceeded": delta_exceeded}

    def runs_left(self, dataset: FederatedDataset | str, limit: int = 200) -> dict | None:
        """How many more releases like the last operation (same kind, method, ε, δ, ρ per entity) fit
        under the cap: ``{"n", "operation", "kind", "method", "epsilon"}``; ``n`` is None without a
        cap, ``limit`` when at least that many fit. None when nothing was charged yet."""
        from dpfed_core.privacy.accounting import REFERENCE_DELTA, ReleaseCharge, compose_releases

        key = self._key_of(dataset)
        with self.store.read() as con:
            ident = self._identity(con, key)
            keys = self._group(con, ident.account)
            last = con.execute(f"SELECT operation, kind, method, epsilon FROM releases WHERE dataset_key IN "
                               f"({', '.join('?' * len(keys))}) AND simulation = 0 AND non_private = 0 "
                               "AND status != 'withdrawn' AND EXISTS (SELECT 1 FROM charges c WHERE c.release_id = "
                               "releases.id) ORDER BY id DESC LIMIT 1", keys).fetchone()
            if last is None:
                return None
            cap_e, cap_d = self._cap(con, ident.account)
            entries = self._entries(con, ident.account)
            # this account's charges of the operation only: a padded table's run is charged to other
            # accounts under the same operation, often to entities of the same names
            op_rows = con.execute("SELECT c.entity AS entity, c.epsilon AS eps, c.delta AS dlt, c.rho AS rho, "
                                  "c.gaussian AS gauss, r.batch AS batch FROM charges c JOIN releases r ON "
                                  "r.id = c.release_id WHERE r.operation = ? AND r.simulation = 0 "
                                  f"AND r.status != 'withdrawn' AND r.dataset_key IN ({', '.join('?' * len(keys))})",
                                  (last["operation"], *keys)).fetchall()
        info = {"operation": last["operation"], "kind": last["kind"], "method": last["method"],
                "epsilon": float(last["epsilon"]), "n": None}
        if not math.isfinite(cap_e):
            return info
        dref = cap_d if cap_d > 0 else REFERENCE_DELTA
        per: dict[str, list] = {}
        for r in op_rows:
            if not math.isinf(r["eps"]):
                per.setdefault(r["entity"], []).append(r)

        memo: dict[tuple, bool] = {}

        def fits(n: int) -> bool:
            for e, rows in per.items():
                cur = entries.get(e, [[]])[0]
                sig = (n, tuple((c.epsilon, c.delta, c.rho, c.gaussian, c.batch) for c in cur),
                       tuple((r["eps"], r["dlt"], r["rho"], r["gauss"], bool(r["batch"])) for r in rows))
                if sig not in memo:  # entities with the same history are composed once
                    add = [ReleaseCharge(r["eps"], r["dlt"], r["rho"], bool(r["gauss"]),
                                         f"more{i}" if r["batch"] else None) for i in range(n) for r in rows]
                    memo[sig] = compose_releases([*cur, *add], dref).epsilon <= cap_e * (1 + CAP_REL_TOL)
                if not memo[sig]:
                    return False
            return True

        lo, hi = 0, 1
        while hi <= limit and fits(hi):
            lo, hi = hi, hi * 2
        hi = min(hi, limit + 1)
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (mid, hi) if fits(mid) else (lo, mid)
        info["n"] = min(lo, limit)
        return info

    def releases(self, dataset: FederatedDataset | str, limit: int | None = None) -> list[dict]:
        """The releases of a dataset's account (the dataset and its re-exports), newest first: id,
        created, kind, method, ε, δ, seed, simulation, non_private, status, operation, note, batch,
        dataset_key, and the largest charge over entities (ε, δ, ρ)."""
        key = self._key_of(dataset)
        with self.store.read() as con:
            keys = self._group(con, self._identity(con, key).account)
            sql = ("SELECT r.*, MAX(c.epsilon) AS max_charge_epsilon, MAX(c.delta) AS max_charge_delta, "
                   "MAX(c.rho) AS max_charge_rho, COUNT(c.entity) AS n_entities_charged FROM releases r "
                   f"LEFT JOIN charges c ON c.release_id = r.id WHERE r.dataset_key IN ({', '.join('?' * len(keys))}) "
                   "GROUP BY r.id ORDER BY r.id DESC")
            params: tuple = tuple(keys)
            if limit is not None:
                sql += " LIMIT ?"
                params = (*keys, int(limit))
            out = []
            for r in con.execute(sql, params):
                d = dict(r)
                d["simulation"] = bool(d["simulation"])
                d["non_private"] = bool(d["non_private"])
                d["charged"] = (not d["simulation"] and d["n_entities_charged"] > 0
                                and d["status"] != "withdrawn")
                if d["max_charge_epsilon"] is None:
                    d["max_charge_epsilon"], d["max_charge_delta"] = 0.0, 0.0
                out.append(d)
        return out

    def charges(self, release_id: int) -> dict[str, tuple[float, float]]:
        with self.store.read() as con:
            return {r["entity"]: (r["epsilon"], r["delta"]) for r in
                    con.execute("SELECT * FROM charges WHERE release_id = ? ORDER BY entity", (release_id,))}

    # ------------------------------------------------------------------ charging
    def reserve(self, dataset: FederatedDataset, plans: Sequence[PlannedRelease], *,
                allow_non_private: bool = False, key: str | None = None,
                operation: str | None = None, enforce: bool = True) -> Reservation:
        """Check every entity's cap against the plans and charge them, atomically — call it before
        any noise is drawn. Raises :class:`BudgetRefused` (nothing charged) if any entity would pass
        its cap, or if a plan is non-private on a capped dataset without ``allow_non_private``.
        ``enforce=False`` records releases that already happened (never refused: the odometer must
        not forget a release)."""
        from dpfed_core.privacy.accounting import REFERENCE_DELTA, batch_pld_epsilon

        if not plans:
            raise ConfigError("nothing to charge: the release plan is empty")
        operation = operation or uuid.uuid4().hex
        secret = self._secret(create=True)
        key = self._charged_key(key, secret, dataset)
        if secret is not None:
            people_fingerprint(dataset, secret)  # computed outside the write lock (memoised)
        # Warm the PLD cache outside the write lock (a batch's PLD takes about a second).
        rhos = [p.rho for p in plans if p.batch and p.gaussian and p.rho is not None and not p.simulation
                and math.isfinite(p.epsilon)]
        if len(rhos) > 1:
            with contextlib.suppress(Exception):
                cap_now = self.cap(key) if self._known(key) else (math.inf, math.inf)
                dref = cap_now[1] if math.isfinite(cap_now[0]) and cap_now[1] > 0 else REFERENCE_DELTA
                batch_pld_epsilon(rhos, dref / 2)
        with self.store.write() as con:  # committed alone: a refusal below must not undo it
            # a killed sweep's never-started points no longer count against the cap
            recovered = recover_killed(con)
        with self.store.write() as con:
            found = self._upsert_dataset(con, key, dataset, secret)
            ident = self._identity(con, key)
            cap_e, cap_d = self._cap(con, ident.account)
            charged = [p for p in plans if not p.simulation]
            others = self._also_held(con, key, dataset, secret, ident.account, found) if charged and secret else []
            if enforce and charged:
                for who_is in [ident, *others]:
                    o_e, o_d = (cap_e, cap_d) if who_is is ident else self._cap(con, who_is.account)
                    if math.isfinite(o_e):
                        self._check(con, who_is, dataset, charged, o_e, o_d, allow_non_private, operation)
            ids, extra, extra_of = [], [], {}
            t, who = now_iso(), actor()
            for owner, emap, note in [(key, ident.entity_map, None),
                                      *((o.account, o.entity_map, f"people of {str(dataset.name)!r} ({key}) "
                                         "recognised among this account's: charged here too") for o in others)]:
                for i, p in enumerate(plans):
                    if note is not None and p.simulation:
                        continue  # another account is charged only what is charged here
                    cur = con.execute(
                        "INSERT INTO releases (dataset_key, operation, kind, method, epsilon, delta, seed, simulation, "
                        "non_private, status, created, note, batch, actor) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, "
                        "'reserved', ?, ?, ?, ?)",
                        (owner, operation, p.kind, p.method, float(p.epsilon), float(p.delta), p.seed,
                         int(bool(p.simulation)), int(p.non_private), t,
                         p.note if note is None else "; ".join(x for x in (p.note, note) if x),
                         operation if p.batch else None, who))
                    rid = int(cur.lastrowid)
                    (ids if note is None else extra).append(rid)
                    if note is not None:
                        extra_of.setdefault(i, []).append(rid)
                    if not p.simulation:
                        con.executemany(
                            "INSERT INTO charges (release_id, entity, epsilon, delta, rho, gaussian) "
                            "VALUES (?, ?, ?, ?, ?, ?)",
                            mapped_charge_rows(rid, {e: (c[0], c[1], p.rho, p.gaussian) for e, c in p.charges.items()},
                                               emap))
        return Reservation(self, key, operation, ids, list(plans), ident.entity_map, extra_ids=extra,
                           extra_of=extra_of, recovered=recovered)

    def key_of(self, dataset: FederatedDataset | str) -> str:
        """The dataset's key, without writing: a dataset the store does not know is matched to its
        account in memory (:meth:`_key_of`)."""
        return self._key_of(dataset)

    def _key_of(self, dataset: FederatedDataset | str) -> str:
        """The key of a dataset (or the key given). A read never writes: a dataset the store does not
        know is matched to its account in memory, so a dry run, a balance or a preview leaves no row —
        no name, no match score, no entity map of a probe of a few records. A charge registers it
        (:meth:`reserve`, :meth:`set_cap`, :meth:`register`)."""
        if isinstance(dataset, str):
            return dataset
        secret = self._secret(create=False)
        key = self._named(secret, dataset)
        if key in self._transient or self._known(key):
            return key
        if self.store.unkeyed_names and self._known(dataset_key(dataset)):
            return dataset_key(dataset)  # a read-only store of the older naming: read as it is
        with self.store.read() as con:
            best = self._best_match(con, key, dataset, secret)
            if best is not None:
                self._transient[key] = Identity(key, best[0], best[0], self._name(con, best[0]), best[1].contained,
                                                self._alias_map(con, best, dataset))
        return key

    def knows(self, dataset: FederatedDataset | str) -> bool:
        """Does the store hold this very dataset (its key; a re-export matched by its people is not it)?"""
        return self._known(self._key_of(dataset)) if self.store.unkeyed_names else self._known(
            self.account_key(dataset, create=False))

    def _known(self, key: str) -> bool:
        with self.store.read() as con:
            return con.execute("SELECT 1 FROM datasets WHERE key = ?", (key,)).fetchone() is not None

    def _check(self, con, ident: Identity, dataset, plans, cap_e, cap_d, allow_non_private, operation) -> None:
        from dpfed_core.privacy.accounting import REFERENCE_DELTA, basic_delta_exceeded, compose_releases

        name = str(dataset.name)
        same = f" ({ident.describe()})" if ident.alias_of else ""
        nonpriv = [p for p in plans if p.non_private]
        if nonpriv and not allow_non_private:
            what = ", ".join(sorted({f"{p.method} ({p.kind}, ε = {_fmt(p.epsilon)})" for p in nonpriv}))
            raise BudgetRefused(
                f"refused: dataset {name!r}{same} has a budget cap (ε = {_cap(cap_e)} per entity) and this would "
                f"make non-private releases (raw data or exact statistics leave entities): {what}. Nothing was "
                "computed. Drop them, or allow them explicitly with {allow_non_private}", param="allow_non_private")
        entries = self._entries(con, ident.account)
        dref = cap_d if cap_d > 0 else REFERENCE_DELTA
        new = self._plan_entries(plans, operation, ident.entity_map)
        over = []
        for e, add in new.items():
            cur = entries.get(e, [[], 0, 0])[0]
            before = compose_releases(cur, dref)
            after = compose_releases([*cur, *add], dref)
            if after.epsilon > cap_e * (1 + CAP_REL_TOL):
                over.append((e, before.epsilon, after.epsilon, after))
        if not over:
            return
        n = len(plans)
        acct = over[0][3]
        # a sweep's points are set by its grid, a run's by its ε: the refusal names the one given
        grid = any(p.kind == "sweep point" for p in plans)
        basic, why = _spent(acct.basic_epsilon), ""
        fix, param = (("Choose {epsilons}, run fewer points", "epsilons") if grid else
                      ("Choose {epsilon}, run fewer points", "epsilon"))
        if basic_delta_exceeded(acct, dref):
            # Σε alone would read as a valid basic charge; it holds only while Σδ ≤ δ_cap/2, so the
            # refusal names δ as what binds, not ε
            basic = f"{basic}, not valid: its Σδ = {acct.basic_delta:.3g} is above δ/2 = {dref / 2:.3g}"
            if math.isinf(acct.tight_epsilon):
                # with zCDP finite it is zCDP's ε that passes the cap, and ε remains the fix
                why = (" zCDP cannot take these releases either: one of them has no ρ before it runs (a method "
                       "that is not Gaussian-only, or an approximate-DP selection).")
                fix, param = ("Choose {delta}, a method whose release has a ρ (dp-cooccurrence, dp-als, "
                              "dp-popularity), run fewer points"), "delta"
        if ident.alias_of is not None:
            # people recognised in another dataset's account: the stored entity they belong to — its
            # name, or a figure that composes its spend — would tell whoever runs a probe of a few
            # records where those people are
            detail = "): it would take the stored account's entities these people belong to over the cap."
        else:
            detail = (f"; composed by the smaller of basic composition ({basic}) and zCDP "
                      f"({_spent(acct.tight_epsilon)})). {_over_lines(over)}.")
        raise BudgetRefused(
            f"refused: privacy budget cap reached for dataset {name!r}{same} (cap ε = {_cap(cap_e)}, δ = {cap_d:.3g} "
            f"per entity; {n} release{'s' if n > 1 else ''} planned{detail}{why} Nothing was computed. {fix}, or — "
            "if you own the data — raise the cap with {cap}", param=param)

    @contextlib.contextmanager
    def charge(self, dataset: FederatedDataset, plans: Sequence[PlannedRelease], *,
               allow_non_private: bool = False, key: str | None = None,
               drawn: "Callable[[], int] | None" = None,
               unstarted: "Callable[[], Sequence[int]] | None" = None) -> Iterator[Reservation]:
        """``with odometer.charge(ds, plans) as r: …`` — reserve (may refuse) before the body runs,
        mark the releases released at the end, or failed (still charged) if the body raises.

        ``drawn``: how many ledger rows the body has recorded so far (e.g. the change of
        :func:`~dpfed_core.privacy.ledger.rows_recorded` for a run computed in this process). When
        the body raises and it says 0 — no mechanism recorded a row, so no noise was drawn and
        nothing left an entity — the reservation is given back (:meth:`Reservation.withdraw`). An
        exception carrying ``ledger_rows = 0`` (a runner elsewhere that failed before starting) is
        taken as the same proof. ``unstarted``: for releases computed one after another (a sweep's
        points), the indices of those the body provably never reached when it stopped (by the same
        count of ledger rows, kept per finished point): they are given back
        (:meth:`Reservation.withdraw_unstarted`), also on an interruption (Ctrl-C), so a resumed sweep is
        not charged twice for them. With ``unstarted``, the reservation's progress is also kept in the store
        (:meth:`Reservation.track`; the body reports finished points with :meth:`Reservation.note_finished`):
        if the process is killed outright, the next charge on this machine withdraws the points after
        the one in flight (:func:`~dpfed_core.privacy.budget_records.recover_killed`). Anything else stays
        charged: a computation killed outright without ``unstarted`` has its releases marked failed by the
        next charge (tracked as in doubt)."""
        res = self.reserve(dataset, plans, allow_non_private=allow_non_private, key=key)
        try:
            # points computed one after another: their progress is kept; any other computation is kept as
            # in doubt, so that a process killed outright leaves its releases failed (charged), not reserved
            res.track(sequential=callable(unstarted))
            yield res
        except BaseException as exc:
            with contextlib.suppress(StoreError):
                rows = getattr(exc, "ledger_rows", None)
                evidence = "the runner reported no ledger row before failing"
                if rows is None and drawn is not None:
                    rows = drawn()
                    evidence = "no ledger row was recorded before the failure (no draw)"
                if rows == 0 and isinstance(exc, Exception):
                    res.withdraw(0, f"withdrawn: {evidence}: {type(exc).__name__}")
                else:
                    if unstarted is not None:
                        res.withdraw_unstarted(unstarted(), "withdrawn: not started before the sweep stopped "
                                               f"(no ledger row recorded for it): {type(exc).__name__}")
                    res.close(failed=True)
                res.untrack()
            raise
        res.close()
        res.untrack()

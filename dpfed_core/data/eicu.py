"""The eICU Collaborative Research Database (or its open demo) read as a federated dataset.

One row per unit stay, one column per event name (drug, lab, treatment, diagnosis …), the value the
number of such events in the stay, federated by hospital or region. eICU's free-text drug names are
normalised to generic names so that one drug is one item, and the entity list is the hospital table's
(public metadata), never the hospitals that happen to have stays. The event rows then go through the
common long-table build.
"""
from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Literal, Sequence

import pandas as pd

from dpfed_core.data.dataset import FederatedDataset
from dpfed_core.data.features import attach_item_features, drug_token_features, hierarchy_features
from dpfed_core.data.inputs import check_one_entity_source, read_list
from dpfed_core.data.long_table import _build, _reject_removed
from dpfed_core.data.tables import Source, _cat_map, _check_columns, _is_missing, _row_ref, read_table
from dpfed_core.errors import ConfigError, DataError

__all__ = [
    "load_eicu",
    "parse_event_tables",
    "normalize_drug_name",
    "normalize_drug_names",
    "EICU_EVENT_TABLES",
    "EICU_VALUE_MAX",
    "EICU_DEFAULT_VALUE_MAX",
]

#: eICU event tables this loader understands and the column holding the item (event) name.
EICU_EVENT_TABLES: dict[str, str] = {
    "medication": "drugname",
    "treatment": "treatmentstring",
    "lab": "labname",
    "diagnosis": "diagnosisstring",
    "infusiondrug": "drugname",
}

#: Declared public bound on the number of events of one kind in one unit stay (SPEC §2: bounds are
#: public parameters, never read off the data). Medication orders and treatments rarely repeat more
#: than ~20 times in a stay; labs are drawn several times a day in long stays; a diagnosis string is
#: recorded a few times at most. The loader clips nothing: it reports how many values exceed the
#: bound (DP mechanisms clip to it).
EICU_VALUE_MAX: dict[str, float] = {"medication": 20.0, "treatment": 20.0, "lab": 50.0, "diagnosis": 10.0,
                                     "infusiondrug": 50.0}

#: Declared bound for an eICU event table without its own entry above.
EICU_DEFAULT_VALUE_MAX = 20.0


_UNITS = r"(?:mg|mcg|g|gm|gram|grams|kg|ml|l|meq|mmol|unit|units|%|mg/ml|mcg/ml|iu)"
_CONTAINER_SEG = re.compile(rf"^\s*[\d.,]+\s*{_UNITS}?\b")
_STOP = frozenset(
    """po iv ivpb ivp im sq subq sc sl pr inj injection ij tab tabs tablet tablets cap caps capsule
    capsules soln sol solution solr susp suspension syr syrup syringe sdv mdv vial vl bag lvp mbp flex
    cont drip infusion inf premix prmx pmx in tbec tbcr tbdp chew chewable ec er xl xr sr dr odt liquid
    liq elixir oral rect supp suppository patch ptch ex op oint ointment cream crm gel neb nebulizer
    nebulization inh inhaler hfa ud pf pack udpwd pwd powder mg mcg g gm gram ml meq unit units bolus
    crys pca gtt sso dose kit ss lf premixed piggyback ivpb. nasal spray top topical soln. tab. mini
    bag. dextrose-free cup inhale inhalation concentrated corrective dosing flexpen sa consult
    laxative standard variable range subcutaneous ir cq mt""".split()
)
_SALTS = frozenset(
    """hcl hydrochloride sodium sod na sulfate bisulfate tartrate bitartrate succinate besylate calcium
    maleate bromide citrate acetate mesylate fumarate potassium disodium hyclate monohydrate dihydrate
    porcine human sulf phosphate gluconate succ suc lactate edisylate methylsulfate tromethamine
    """.split()
)
_IONS = frozenset("sodium potassium magnesium calcium ferrous zinc aluminum sod mag k".split())
#: brand names and abbreviations → generic names (lower case), for the commonest ICU drugs
_SYNONYMS = {
    "tylenol": "acetaminophen", "zofran": "ondansetron", "lasix": "furosemide", "ativan": "lorazepam",
    "protonix": "pantoprazole", "lovenox": "enoxaparin", "pepcid": "famotidine",
    "novolog": "insulin aspart", "aspart insulin": "insulin aspart", "insulin-aspart": "insulin aspart",
    "humalog": "insulin lispro", "insulin-lispro": "insulin lispro", "lispro insulin": "insulin lispro",
    "lantus": "insulin glargine", "glargine insulin": "insulin glargine", "narcan": "naloxone",
    "percocet": "oxycodone-acetaminophen", "lopressor": "metoprolol", "toprol": "metoprolol",
    "flagyl": "metronidazole", "plavix": "clopidogrel", "klor-con": "potassium chloride",
    "k-tab": "potassium chloride", "kcl": "potassium chloride", "potassium cl": "potassium chloride",
    "proventil": "albuterol", "ventolin": "albuterol", "duoneb": "ipratropium-albuterol",
    "albuterol-ipratropium": "ipratropium-albuterol", "cordarone": "amiodarone",
    "zosyn": "piperacillin-tazobactam", "coumadin": "warfarin", "levophed": "norepinephrine",
    "nacl": "sodium chloride", "ns": "sodium chloride", "normal saline": "sodium chloride",
    "d5w": "dextrose", "dext": "dextrose", "rocephin": "ceftriaxone", "dilaudid": "hydromorphone",
    "haldol": "haloperidol", "seroquel": "quetiapine", "colace": "docusate", "senokot": "senna",
    "sennosides": "senna", "xanax": "alprazolam", "toradol": "ketorolac", "precedex": "dexmedetomidine",
    "diprivan": "propofol", "versed": "midazolam", "solu-medrol": "methylprednisolone",
    "solu-cortef": "hydrocortisone", "lipitor": "atorvastatin", "zocor": "simvastatin",
    "norvasc": "amlodipine", "synthroid": "levothyroxine", "vancocin": "vancomycin",
    "norco": "hydrocodone-acetaminophen", "vicodin": "hydrocodone-acetaminophen",
    "acetamin/hydrocodon": "hydrocodone-acetaminophen", "heparin sod": "heparin",
    "kayexalate": "sodium polystyrene sulfonate", "cipro": "ciprofloxacin", "levaquin": "levofloxacin",
    "ancef": "cefazolin", "benadryl": "diphenhydramine", "compazine": "prochlorperazine",
    "reglan": "metoclopramide", "miralax": "polyethylene glycol", "glycolax": "polyethylene glycol",
    "asa": "aspirin", "ecotrin": "aspirin", "nitrostat": "nitroglycerin", "ntg": "nitroglycerin",
    "cardizem": "diltiazem", "imdur": "isosorbide mononitrate", "zyprexa": "olanzapine",
    "ambien": "zolpidem", "flomax": "tamsulosin", "neurontin": "gabapentin", "keppra": "levetiracetam",
    "dilantin": "phenytoin", "decadron": "dexamethasone", "aldactone": "spironolactone",
    "bumex": "bumetanide", "vitamin k": "phytonadione", "mag sulfate": "magnesium sulfate",
    "magnesium sulf": "magnesium sulfate", "sodium bicarb": "sodium bicarbonate",
    "morphine sul": "morphine", "fentanyl citrate": "fentanyl", "pantoprazole sod": "pantoprazole",
    "nss": "sodium chloride", "sodium cl": "sodium chloride", "sodium chl": "sodium chloride",
    "dextrose-nacl": "dextrose-sodium chloride", "d50": "dextrose", "glutose": "glucose",
    "glucagen": "glucagon", "insulin regular human": "insulin regular", "humulin r": "insulin regular",
    "regular insulin": "insulin regular", "insulin reg": "insulin regular",
    "insulin hum-reg": "insulin regular", "insulin-regular": "insulin regular",
    "insulin human regular": "insulin regular", "insulin-glargine": "insulin glargine",
    "insulin lantus": "insulin glargine", "levemir": "insulin detemir", "insulin humalog": "insulin lispro",
    "novolog flexpen": "insulin aspart", "buminate": "albumin", "solumedrol": "methylprednisolone",
    "medrol": "methylprednisolone", "sublimaze": "fentanyl", "sennosides-docusate": "senna-docusate",
    "senokot-s": "senna-docusate", "k-dur": "potassium chloride", "kayciel": "potassium chloride",
    "mvi": "multivitamin", "multivitamins": "multivitamin", "infuvite": "multivitamin",
    "lactated ringers": "lactated ringer's", "ringers": "lactated ringer's", "lr": "lactated ringer's",
    "coreg": "carvedilol", "dulcolax": "bisacodyl", "atrovent": "ipratropium", "apresoline": "hydralazine",
    "piperacillin sod-tazobactam so": "piperacillin-tazobactam",
    "piperacillin-tazobactam": "piperacillin-tazobactam", "heparin sodium lock flush": "heparin flush",
    "heparin lock flush": "heparin flush", "saline flush": "sodium chloride flush",
    "normal saline flush": "sodium chloride flush", "saline lock": "sodium chloride flush",
    "prinivil": "lisinopril", "zestril": "lisinopril", "lanoxin": "digoxin", "deltasone": "prednisone",
    "bayer": "aspirin", "restoril": "temazepam", "magox": "magnesium oxide", "phenergan": "promethazine",
    "pnu-immune-23": "pneumococcal vaccine", "pneumococcal vac polyvalent": "pneumococcal vaccine",
    "pneumococcal polysaccharides": "pneumococcal vaccine", "assess pneumococcal vaccine": "pneumococcal vaccine",
    "pneumococcal": "pneumococcal vaccine", "oxycodone-apap": "oxycodone-acetaminophen",
    "oxycodone-acetamin": "oxycodone-acetaminophen", "acetaminophen-oxycodone": "oxycodone-acetaminophen",
    "hydrocodone-apap": "hydrocodone-acetaminophen", "cozaar": "losartan", "normodyne": "labetalol",
    "trandate": "labetalol", "merrem": "meropenem", "ultram": "tramadol", "valium": "diazepam",
    "maalox": "aluminum-magnesium hydroxide-simethicone",
    "alum & mag hydroxide-simeth": "aluminum-magnesium hydroxide-simethicone",
    "mag-alum hydroxide w-simeth": "aluminum-magnesium hydroxide-simethicone",
    "roxicodone": "oxycodone", "nitro-bid": "nitroglycerin", "cephulac": "lactulose",
    "catapres": "clonidine", "klonopin": "clonazepam", "motrin": "ibuprofen", "nexterone": "amiodarone",
    "heparin-dextrose": "heparin", "milk of magnesia": "magnesium hydroxide", "nicoderm": "nicotine",
    "albuterol-ipratropium": "ipratropium-albuterol", "senna-docusate": "senna-docusate",
}  # fmt: skip


def normalize_drug_name(name: str) -> str:
    """A readable generic name from an eICU ``drugname`` (lower case).

    Container prefixes ("1000 ML FLEX CONT : …"), parenthesised remarks, everything from the first
    dose/strength/route/form token on ("325 MG PO TABS", "IVPB", "ER"), salt suffixes after a
    non-ion name ("metoprolol tartrate" → "metoprolol"; "potassium chloride" kept) are removed, and
    common brand names map to the generic ("TYLENOL" → "acetaminophen").

    >>> normalize_drug_name("ACETAMINOPHEN 325 MG PO TABS"), normalize_drug_name("acetaminophen")
    ('acetaminophen', 'acetaminophen')
    """
    s = re.sub(r"\s+", " ", str(name).lower()).strip()
    if not s:
        return s
    # container descriptions sit before " : " or " - " (or after them): keep the drug segment
    segs = [x.strip() for x in re.split(r"\s*:\s*|\s+-\s+", s) if x.strip()]
    drug_segs = [x for x in segs if not _CONTAINER_SEG.match(x)]
    s = drug_segs[0] if drug_segs else s
    s = re.split(r"[,;]", s)[0]  # "PROVENTIL,VENTOLIN", "NORMODYNE;TRANDATE" list synonyms
    s = re.sub(r"\([^)]*\)?|\[[^\]]*\]?|\*[^*]*\*", " ", s)  # (PEPCID), (PF), *UNIT*
    s = s.replace("%", "% ").replace("/", "-").lstrip("<>*#-=. ")  # "0.9%NaCl", "albuterol/ipratropium"
    tokens = s.split()
    while tokens and (tokens[0] in _STOP or tokens[0][0].isdigit()):
        tokens.pop(0)  # "PRMX NOREPInephrine …"
    out: list[str] = []
    for tok in tokens:
        if tok[0].isdigit() or tok in _STOP or tok.startswith(("0.", ".")):
            break
        out.append(tok)
    while len(out) > 1 and out[-1] in _SALTS and out[0] not in _IONS:
        out.pop()
    res = " ".join(out).strip(" ,.-/") or s.strip()
    res = _SYNONYMS.get(res, res)
    if " " not in res and "-" in res:  # "hydrocodone-acetaminophen" stays, "insulin-lispro" maps
        res = _SYNONYMS.get(res, res)
    return res


def normalize_drug_names(names: pd.Series) -> pd.Series:
    """Vectorised :func:`normalize_drug_name` (evaluated once per distinct name)."""
    uniq = pd.Series(names.dropna().unique())
    mapping = dict(zip(uniq, uniq.map(normalize_drug_name)))
    return names.map(mapping)


def _find_table(root: Path, stem: str) -> Path | None:
    """``stem.csv[.gz]`` in ``root``, matched without regard to case (eICU files are ``infusionDrug.csv.gz``,
    users type ``infusiondrug``)."""
    for cand in (f"{stem}.csv.gz", f"{stem}.csv", f"{stem.upper()}.csv.gz", f"{stem.upper()}.csv"):
        if (root / cand).is_file():
            return root / cand
    low = stem.lower()
    for p in sorted(root.iterdir()) if root.is_dir() else []:
        if p.is_file() and p.name.lower() in (f"{low}.csv.gz", f"{low}.csv"):
            return p
    return None


def _table_stems(root: Path) -> list[str]:
    return sorted({p.name[: -len(".csv.gz")] if p.name.lower().endswith(".csv.gz") else p.name[: -len(".csv")]
                   for p in root.iterdir() if p.is_file() and p.name.lower().endswith((".csv", ".csv.gz"))})


def _read_eicu_table(root: Path, stem: str, cols: list[str], why: str,
                     flag: str | None = None) -> tuple[pd.DataFrame, str]:
    path = _find_table(root, stem)
    if path is None:
        stems = [t for t in _table_stems(root) if t.lower() not in ("patient", "hospital")]
        found = ", ".join(sorted(p.name for p in root.iterdir())[:20]) or "nothing"
        listing = f" Found: {found}."
        tables = f" — tables here: {', '.join(stems)}" if flag and stems else ""
        hint = (f" Choose the event table(s) with events=<table>{tables}." if flag and stems
                else " Choose another event table with events=<table>." if flag else "")
        raise DataError(
            f"eICU directory {root} has no {stem}.csv or {stem}.csv.gz ({why}).{listing}{hint}",
            param=flag, listing=(listing, tables),
        )
    header, label, _ = read_table(path, what=f"eICU {stem}", usecols=["\x00none"])  # header only
    _check_columns(header, label, {c: f"needed from the {stem} table" for c in cols})
    df, label, _ = read_table(path, what=f"eICU {stem}", usecols=cols, dtype={c: "category" for c in cols})
    return df, label


def _event_name_column(root: Path, table: str, explicit: str | None) -> str:
    """The column naming the event of an eICU table: given as ``table:column``, known for the common
    tables, else the one column whose name ends in ``name`` or ``string`` (drugname, labname,
    treatmentstring, …)."""
    if explicit:
        return explicit
    if table.lower() in EICU_EVENT_TABLES:
        return EICU_EVENT_TABLES[table.lower()]
    path = _find_table(root, table)
    if path is None:
        return ""  # reported by _read_eicu_table
    header, label, _ = read_table(path, what=f"eICU {table}", usecols=["\x00none"])
    cols = [str(c) for c in header.columns]
    cands = [c for c in cols if c.lower().endswith(("name", "string")) and c.lower() != "patientunitstayid"]
    if len(cands) != 1:
        raise ConfigError(
            f"eICU table {path.name}: cannot tell which column names the event "
            f"({'candidates: ' + ', '.join(cands) if cands else 'no column ending in name/string'}); give it as "
            f"events={table}:<column> (columns: {', '.join(cols[:20])})", param="events")
    return cands[0]


def parse_event_tables(event_table: str | Sequence[str]) -> list[tuple[str, str | None]]:
    """``"medication"``, ``"medication,infusionDrug"``, ``["lab", "infusionDrug:drugname"]`` → [(table, column)]."""
    parts = [t.strip() for t in event_table.split(",")] if isinstance(event_table, str) else [str(t).strip() for t in event_table]
    out = []
    for t in parts:
        if not t:
            continue
        tb, _, col = t.partition(":")
        if not re.fullmatch(r"[A-Za-z0-9_]+", tb.strip()):
            raise ConfigError(f"event table {t!r} is not a table name (letters, digits, _)", param="events")
        out.append((tb.strip(), col.strip() or None))
    if not out:
        raise ConfigError("give at least one eICU event table, e.g. medication, lab, treatment, diagnosis or "
                          "infusionDrug", param="events")
    return out


def load_eicu(
    path: str | os.PathLike,
    event_table: str | Sequence[str] = "medication",
    entity: Literal["hospitalid", "hospital", "region"] = "hospitalid",
    *,
    value_max: float | None = None,
    drop_cancelled: bool = True,
    exclude_entities: Sequence[str] = (),
    items: Source | Sequence[str] | None = None,
    name: str | None = None,
    entities: Source | Sequence[str] | None = None,
    entities_from_data: bool = False,
    item_features: Any = None,
    undeclared_entities: Literal["drop", "error"] = "drop",
    **removed: Any,
) -> FederatedDataset:
    """Load the eICU database (or its open demo): unit stays × events, federated by hospital/region.

    Declared federation: the hospital table's hospitals (``"hospital <id>"``) or its
    regions, public metadata — never the hospitals that happen to have stays. A hospital without a
    stay takes part with 0 users. ``entities`` (a file or list; bare hospital ids accepted) replaces
    it; without a hospital table the list is read from the data (``entities_from_data``).
    Public item features from a declared catalogue: the ``|`` hierarchy of treatment / diagnosis
    names and the tokens of normalised drug names; ``item_features`` adds a file.

    Reads ``patient.csv[.gz]`` (patientunitstayid, hospitalid), ``hospital.csv[.gz]`` (hospitalid,
    region; only for ``entity="region"``) and the event table(s): any eICU table with a
    ``patientunitstayid`` and a column naming the event — ``medication`` (drugname), ``treatment``
    (treatmentstring), ``lab`` (labname), ``diagnosis`` (diagnosisstring), ``infusionDrug``
    (drugname), … (the name column is found by its name ending in ``name``/``string``, or given as
    ``"table:column"``).

    One row per unit stay (``patientunitstayid``); value = number of events of that item in that
    stay; ``value_kind="counts"`` with the declared public bound :data:`EICU_VALUE_MAX` of the table
    (the largest one when several tables are combined; :data:`EICU_DEFAULT_VALUE_MAX` for other
    tables) unless ``value_max`` is given. Counts above the bound are kept with a note and clipped by
    the DP mechanisms — the same rule as counts in :func:`~dpfed_core.data.long_table.load_long_table`.

    Entities are every hospital (or region) with stays in the patient table, whatever its size
    (``exclude_entities`` declares some out). Items: a declared formulary ``items`` (one name per
    line; drug names are normalised like the data's) fixes what is shared — its drugs are the first
    columns, the data's other drugs follow as the hospitals' own — else the data's item names,
    marked ``item_source="data"`` so that a DP run selects its catalogue by DP partition selection.
    No item is dropped for being rare (a rule on a true count).

    Drug names are normalised (:func:`normalize_drug_name`); medication rows without a drug name get
    the name most often recorded with the same ``drughiclseqno`` code; cancelled orders are dropped
    (``drop_cancelled``). With several event tables, item names are prefixed with the table.
    """
    _reject_removed(removed, "load_eicu")
    check_one_entity_source(entities, entities_from_data)
    root = Path(path)
    if not root.is_dir():
        raise DataError(f"eICU directory not found: {root}")
    tables = parse_event_tables(event_table)
    if entity == "hospital":
        entity = "hospitalid"
    if entity not in ("hospitalid", "region"):
        raise ConfigError(f"entity must be 'hospitalid' or 'region'; got {entity!r}", param="entity")
    notes: list[str] = []

    patient, plabel = _read_eicu_table(root, "patient", ["patientunitstayid", "hospitalid"], "one row per unit stay")
    miss = _is_missing(patient["patientunitstayid"]) | _is_missing(patient["hospitalid"])
    if miss.any():
        i = miss.index[miss.to_numpy()][0]
        raise DataError(
            f"{_row_ref(plabel, i, True)}: patientunitstayid or hospitalid is empty; every unit "
            "stay needs both."
        )
    stay_ids = patient["patientunitstayid"].astype(str).str.strip()
    if stay_ids.duplicated().any():
        i = stay_ids.index[stay_ids.duplicated().to_numpy()][0]
        raise DataError(
            f"{_row_ref(plabel, i, True)}: unit stay {stay_ids.loc[i]} is listed twice in the patient "
            "table; patientunitstayid must be unique."
        )
    hosp = patient["hospitalid"].astype(str).str.strip()
    declared_entities = _eicu_entities(root, entity, entities, notes)
    if entity == "region":
        hospital, hlabel = _read_eicu_table(root, "hospital", ["hospitalid", "region"], "needed for entity='region'")
        # read as the entity list reads them (_eicu_entities): a missing region is "", any text is its name
        region = pd.DataFrame({"hospitalid": _plain_str(hospital["hospitalid"]),
                               "region": _plain_str(hospital["region"])})
        region = region.drop_duplicates("hospitalid").set_index("hospitalid")["region"]
        ent = hosp.map(region)
        n_unknown = int(ent.isna().sum() + ent.eq("").sum())
        ent = ent.fillna("Unknown region").replace("", "Unknown region")
        if n_unknown:
            notes.append(f"{n_unknown} unit stays are in hospitals without a region: entity 'Unknown region'")
    else:
        ent = "hospital " + hosp
    stay_entity = pd.Series(ent.to_numpy(), index=stay_ids.to_numpy())

    parts = []
    bounds = []
    names_cols = []
    for tb, col_given in tables:
        col = _event_name_column(root, tb, col_given)
        extra = [c for c in ("drugordercancelled", "drughiclseqno") if tb.lower() == "medication"]
        path_tb = _find_table(root, tb)
        cols = ["patientunitstayid", col]
        if path_tb is not None and extra:
            header, _, _ = read_table(path_tb, what=f"eICU {tb}", usecols=["\x00none"])
            cols += [c for c in extra if c in header.columns]
        ev, elabel = _read_eicu_table(root, tb, cols, f"the {tb} events", flag="events")
        n0 = len(ev)
        if tb.lower() == "medication" and drop_cancelled and "drugordercancelled" in ev.columns:
            cancelled = _cat_map(ev["drugordercancelled"], lambda c: c.str.strip().str.lower()).astype(str).eq("yes")
            if cancelled.any():
                notes.append(f"dropped {int(cancelled.sum())} cancelled medication orders")
                ev = ev.loc[~cancelled.to_numpy()]
        raw_names = ev[col].astype(str).where(ev[col].notna())
        names = raw_names.str.strip()
        is_drug = col.lower() == "drugname"
        if tb.lower() == "medication" and "drughiclseqno" in ev.columns:
            # eICU leaves drugname empty on many rows that carry the drug's HICL code: recover the
            # name most often recorded with that code elsewhere in the table
            code = ev["drughiclseqno"].astype(str).where(ev["drughiclseqno"].notna()).str.strip()
            norm = normalize_drug_names(names.where(names.fillna("").str.len() > 0))
            named = pd.DataFrame({"code": code, "name": norm}).dropna()
            best = named.groupby(["code", "name"]).size().reset_index(name="n")
            best = best.sort_values(["code", "n", "name"], ascending=[True, False, True]).drop_duplicates("code")
            filled = norm.isna() & code.notna()
            norm = norm.where(~filled, code.map(best.set_index("code")["name"]))
            n_filled = int((filled & norm.notna()).sum())
            if n_filled:
                notes.append(f"named {n_filled} medication rows without a drug name from their HICL code")
            names = norm
        elif is_drug:
            names = normalize_drug_names(names.where(names.fillna("").str.len() > 0))
        else:
            names = names.str.replace(r"\s+", " ", regex=True)
        names = names.where(names.fillna("").str.len() > 0)
        if names.isna().any():
            notes.append(f"dropped {int(names.isna().sum())} {tb} rows without a {col}")
        stays = ev["patientunitstayid"].astype(str).where(ev["patientunitstayid"].notna()).str.strip()
        keep = names.notna() & stays.notna()
        known = stays.isin(stay_entity.index)
        if (keep & ~known).any():
            notes.append(f"dropped {int((keep & ~known).sum())} {tb} rows of unit stays absent from the patient table")
        keep &= known
        item = names[keep] if len(tables) == 1 else tb + ": " + names[keep]
        parts.append(pd.DataFrame({"stay": stays[keep].to_numpy(), "item": item.to_numpy()}))
        if not keep.any():
            raise DataError(f"{elabel}: none of its {n0} rows names an event of a known unit stay")
        bounds.append(EICU_VALUE_MAX.get(tb.lower()))
        names_cols.append((tb, is_drug))

    declared = None
    derived = None
    if items is not None:
        lf = read_list(items, what="item list", param="items")
        ids = lf.ids
        drugs = len(names_cols) == 1 and names_cols[0][1]
        if drugs:
            ids = normalize_drug_names(pd.Series(ids)).tolist()  # a formulary is matched like the data
        declared = read_list(ids, what="item list", param="items")
        declared.notes = lf.notes + declared.notes
        # public features of the declared names only (names read off the rows would not be public)
        if any("|" in x for x in declared.ids):
            derived = hierarchy_features(declared.ids, declared.ids)
        elif drugs:
            derived = drug_token_features(declared.ids, declared.ids)
    events = pd.concat(parts, ignore_index=True)
    counts = events.groupby(["stay", "item"], sort=False).size().reset_index(name="count")
    counts["entity"] = counts["stay"].map(stay_entity).to_numpy()
    if value_max is not None:
        vmax = value_max
    elif all(b is not None for b in bounds):
        vmax = max(bounds)
    else:
        vmax = max(b if b is not None else EICU_DEFAULT_VALUE_MAX for b in bounds)
        other = [tb for (tb, _), b in zip(tables, bounds) if b is None]
        notes.append(f"table(s) {', '.join(other)} have no declared bound: the default public bound "
                     f"{EICU_DEFAULT_VALUE_MAX:g} events per stay and item is used (set it with value_max)")
    ent_label = "hospital" if entity == "hospitalid" else "region"
    tnames = "+".join(tb for tb, _ in tables)
    ds = _build(
        counts, f"eICU {tnames} table", False,
        user_col="stay", item_col="item", value_col="count", entity_col="entity",
        entity_from=None, entity_transform=None, item_name_col=None,
        value_kind="counts", value_max=vmax, duplicates=None,
        over_max="note", drop_missing=False, exclude_entities=exclude_entities, items=declared,
        name=name or f"eICU {root.name} ({tnames} by {ent_label})", notes=notes,
        entities=declared_entities, entities_from_data=entities_from_data, undeclared_entities=undeclared_entities,
    )  # fmt: skip
    return attach_item_features(ds, item_features, derived=derived)


def _plain_str(s: pd.Series) -> pd.Series:
    """Stripped strings of any column (categorical or text), missing values as ""."""
    o = s.astype(object)
    return o.where(o.notna(), "").astype(str).str.strip()


def _eicu_entities(root: Path, entity: str, entities: Any, notes: list[str]) -> list[str] | None:
    """The declared entity list of an eICU federation: ``entities`` if given (bare hospital ids become
    "hospital <id>"), else the hospital table's hospitals or regions; None without a hospital table."""
    if entities is not None:
        ids = read_list(entities, what="entity list", param="entities").ids
        if entity == "hospitalid":
            ids = [f"hospital {x}" if re.fullmatch(r"\d+", x) else x for x in ids]
        return ids
    if _find_table(root, "hospital") is None:
        if entity == "region":
            return None  # reported by the region lookup itself
        notes.append("no hospital table: the entity list is the hospitals found in the patient table (read from "
                     "the data); declare it with entities=FILE")
        return None
    hospital, _ = _read_eicu_table(root, "hospital", ["hospitalid"] + (["region"] if entity == "region" else []),
                                   "the public list of hospitals")
    hid = _plain_str(hospital["hospitalid"])
    if entity == "hospitalid":
        return [f"hospital {x}" for x in dict.fromkeys(hid[hid != ""])]
    reg = _plain_str(hospital["region"])
    out = list(dict.fromkeys(r for r in reg if r))
    if (reg == "").any():
        out.append("Unknown region")
    return out

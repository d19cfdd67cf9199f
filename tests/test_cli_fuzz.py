"""Fuzz: 200 generated malformed tables and flag combinations through the CLI, run
in-process. Each must end with exit 0 and a valid JSON document, or exit 2 and exactly one
``error: …`` line — never a traceback, never a changed input file, never a partial output file."""
from __future__ import annotations

import contextlib
import io
import json
import random
from pathlib import Path

import pytest

from dpfed_core.cli import main

N_CASES = 200


def _table(r: random.Random, valid: bool) -> tuple[str, list[str]]:
    """A small long table with random defects, and the data flags that (mostly) match it."""
    cols = ["user", "item", "value", "site"]
    rows = []
    n_ent = r.choice([1, 2, 3])
    for e in range(n_ent):
        for u in range(r.randint(2, 9)):
            for i in r.sample(range(12), r.randint(1, 8)):
                uid = r.choice([f"u{e}_{u}", str(u + 100 * e), f"0{u}{e}"])
                rows.append([uid, r.choice([str(i), f"i{i}", f"0{i}"]), str(r.randint(0, 6)), f"E{e}"])
    defects = [] if valid and r.random() < 0.6 else r.sample(["blank", "text", "negative", "nan", "inf", "huge", "extra", "short", "dup", "quote",
                        "empty_file", "header_only", "binary", "bom", "semicolon", "none", "none", "none"],
                       r.randint(0, 3))
    lines = [",".join(cols)] + [",".join(x) for x in rows]
    for d in defects:
        k = r.randrange(1, max(len(lines), 2)) if len(lines) > 1 else 0
        if d in ("blank", "text", "negative", "nan", "inf", "huge") and len(lines) > 1:
            parts = lines[k].split(",")
            if len(parts) == 4:
                j = r.randrange(4) if d == "blank" else 2
                parts[j] = {"blank": "", "text": "lots", "negative": "-3", "nan": "nan", "inf": "inf",
                            "huge": "1e308"}[d]
                lines[k] = ",".join(parts)
        elif d == "extra":
            lines.insert(k, "a,b,c,d,e,f")
        elif d == "short":
            lines.insert(k, "a,b")
        elif d == "dup" and len(lines) > 1:
            lines.append(lines[k])
        elif d == "quote":
            lines.insert(k, 'x,"unterminated,3,E0')
        elif d == "empty_file":
            lines = []
        elif d == "header_only":
            lines = lines[:1]
        elif d == "binary":
            lines.insert(k, "\x00\x01\x02")
        elif d == "bom":
            lines[0] = "\ufeff" + lines[0]
        elif d == "semicolon":
            lines = [ln.replace(",", ";") for ln in lines]
    text = "\n".join(lines) + ("\n" if lines else "")
    if valid:
        return text, ["--user-col", "user", "--item-col", "item", "--entity-col", "site", "--value-col", "value",
                      "--value-kind", r.choice(["ratings", "counts", "implicit"]), "--value-max", "6"]
    flags = ["--user-col", r.choice(["user", "user", "User", "nope"]), "--item-col", "item",
             "--entity-col", r.choice(["site", "site", "value"])]
    if r.random() < 0.8:
        flags += ["--value-col", r.choice(["value", "value", "missing"])]
    if r.random() < 0.7:
        flags += ["--value-kind", r.choice(["ratings", "counts", "implicit"])]
    if r.random() < 0.6:
        flags += ["--value-max", r.choice(["5", "6", "0", "-1", "1e308", "inf", "nan", "abc", "20"])]
    return text, flags


def _model_flags(r: random.Random, sweep: bool, valid: bool) -> list[str]:
    if valid:
        f = ["--method", r.choice(["kmeans", "krandom", "individual", "popularity", "dp-gaussian", "random-v"]),
             "--k", r.choice(["1", "2"]), "--rank", r.choice(["1", "2"]), "--simulation"]
        if r.random() < 0.3:
            f += ["--param", "cluster_size=none"] if f[1] == "dp-gaussian" else ["--top-n", "3"]
        if sweep:
            # a grid only for the method that spends ε: the others refuse one by name (drawn either way,
            # so every later case stays the same)
            grid = r.choice(["1,inf", "0.5,4"])
            f += (["--epsilons", grid] if f[1] == "dp-gaussian" else []) + [
                "--seeds", r.choice(["0", "0,1"]), "--references", "individual"]
        return f
    f = ["--method", r.choice(["kmeans", "krandom", "individual", "popularity", "dp-gaussian", "random-v",
                               "magic"])]
    opts = {
        "--k": ["1", "2", "3", "0", "-2", "1000000", "x"],
        "--rank": ["1", "2", "0", "1000000", "2.5"],
        "--epsilon": ["1", "0.5", "inf", "0", "-1", "1e50", "1e400", "nan"],
        "--delta": ["1e-6", "0", "0.5", "1", "-1"],
        "--seed": ["0", "1", "-1", "99999999999999999999"],
        "--lam": ["0.1", "-1", "inf", "1e300"],
        "--mode": ["zero", "observed", "bad"],
        "--top-n": ["5", "0", "-1"],
        "--param": ["support=-1", "support=abc", "value_max=1e308", "n_jobs=0", "cluster_size=none", "bogus=1",
                    "noequals"],
        "--exclude-entities": ["E0", "nope", ""],
    }
    for flag, vals in opts.items():
        if r.random() < 0.25:
            f += [flag, r.choice(vals)]
    if r.random() < 0.5:
        f += ["--simulation"]
    if sweep:
        if r.random() < 0.5:
            f += ["--epsilons", r.choice(["1,inf", "1,1", "0.5,2", "0,1", "abc", "", "1e400"])]
        f += ["--seeds", r.choice(["0", "0,1", "0,0", "-1", "x"])]
        f += ["--references", r.choice(["individual", "individual,central", "nope", ""])]
        if r.random() < 0.3:
            f += ["--metric", r.choice(["mar", "test_rmse", "bogus", "ndcg_at_10"])]
    return f


def _run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:  # --help only; counted as a failure below if it happens
            code = int(exc.code or 0)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("block", range(4))
def test_fuzz_cli(tmp_path, block):
    r = random.Random(1000 + block)
    failures, outcomes = [], []
    for case in range(N_CASES // 4):
        sub = tmp_path / f"c{case}"
        sub.mkdir()
        valid = r.random() < 0.5  # half the cases: well-formed flags (data defects only, or none)
        text, flags = _table(r, valid)
        src = sub / r.choice(["t.csv", "t.tsv", "t.txt"])
        src.write_text(text, encoding="utf-8")
        before = src.read_bytes()
        sweep = r.random() < 0.3
        out = sub / "out.json"
        prev = r.random() < 0.3
        if prev:
            out.write_text('{"previous": true}')
        argv = ["sweep" if sweep else "run", "--data", str(src), *flags, *_model_flags(r, sweep, valid),
                "--out", str(out)]
        code, stdout, stderr = _run(argv)
        where = f"case {block}/{case}: {' '.join(argv[1:])}"
        if "Traceback" in stderr or "Traceback" in stdout:
            failures.append(f"{where}: traceback")
        if src.read_bytes() != before:
            failures.append(f"{where}: input changed")
        leftovers = [p.name for p in sub.iterdir() if p.name not in (src.name, "out.json")]
        if leftovers:
            failures.append(f"{where}: stray files {leftovers}")
        if code == 0:
            try:
                doc = json.loads(out.read_text())
            except (OSError, ValueError) as exc:
                failures.append(f"{where}: exit 0 without a valid document ({exc})")
                continue
            if "runs" not in doc and "overall" not in doc:
                failures.append(f"{where}: exit 0 but the document has no results")
        elif code == 2:
            if not (stderr.startswith("error: ") and stderr.count("\n") == 1):
                failures.append(f"{where}: exit 2 without exactly one error line: {stderr!r}")
            if prev and out.read_text() != '{"previous": true}':
                failures.append(f"{where}: the previous output was changed by a failed run")
            if not prev and out.exists():
                failures.append(f"{where}: a failed run left an output file")
        else:
            failures.append(f"{where}: exit {code}: {stderr[-300:]!r}")
        outcomes.append(code)
    print(f"random fuzz block {block}: {outcomes.count(0)} valid results, {outcomes.count(2)} clean errors, "
          f"{len(failures)} bad (traceback / changed input / partial output / other exit)")
    assert not failures, "\n".join(failures[:20])
    # the generator must exercise both outcomes, or the test proves little
    assert outcomes.count(0) >= 5 and outcomes.count(2) >= 10, outcomes


# ====================================================================== hostile inputs
# Every case below has a known right outcome. The outcome taxonomy: a clean error (exit 2, one
# `error:` line naming only flags that exist, never "unexpected"/"internal"), a valid result (exit 0
# and a document that says the right thing), or one of the bad classes — silent wrong (exit 0 with a
# wrong result, or an error where a result was due), hang, changed input, partial output, crash-worded
# or misleading error. The suite asserts 0 for every bad class.
import os
import re
import threading
from collections import Counter

BAD_CLASSES = ("silent wrong", "hang", "changed input", "partial output", "crash-worded or misleading error")


def _known_flags() -> set[str]:
    from dpfed_core.cli.main import build_parser

    flags: set[str] = set()

    def walk(p):
        for a in p._actions:
            flags.update(s for s in a.option_strings if s.startswith("--"))
            if a.choices and isinstance(a.choices, dict):
                for sub in a.choices.values():
                    walk(sub)

    walk(build_parser())
    return flags


def _run_bounded(argv: list[str], seconds: float = 120) -> tuple[int | None, str, str]:
    """main(argv) in a daemon thread; (None, …) when it has not returned within ``seconds`` (a hang)."""
    box: dict = {}

    def target():
        box["r"] = _run(argv)

    t = threading.Thread(target=target, daemon=True)
    t.start()
    t.join(seconds)
    return box.get("r", (None, "", ""))


def _long_table(path: Path, extra_rows: list[str] | None = None, header: str = "user,item,site") -> None:
    rows = [f"u{e}{i},i{j},{e}" for e in "ABC" for i in range(8) for j in range(1 + (i % 4), 7)]
    path.write_text(header + "\n" + "\n".join(rows + (extra_rows or [])) + "\n", encoding="utf-8")


def _hostile_cases(d: Path) -> list[dict]:
    """(argv, expect, check) of every hostile case; files are made in ``d``."""
    data = d / "t.csv"
    _long_table(data)
    base = ["--data", str(data), "--user-col", "user", "--item-col", "item", "--entity-col", "site",
            "--value-kind", "implicit", "--rank", "2"]
    run = ["run", *base, "--method", "popularity"]
    items = d / "items.txt"
    items.write_text("\n".join(f"i{j}" for j in range(1, 7)) + "\n")
    os.symlink(data, d / "link.csv")
    os.link(data, d / "hard.csv")
    os.mkfifo(d / "fifo")
    doc = d / "prev.json"
    doc.write_text('{"previous": true}')
    deep = d / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    cases: list[dict] = []

    def case(argv, expect, check=None, name=""):
        cases.append({"argv": argv, "expect": expect, "check": check, "name": name or " ".join(argv[-4:])})

    # outputs naming an input or the store
    for o in (data, d / "link.csv", d / "hard.csv", items, Path(os.environ["DPFED_STORE"])):
        case([*run, "--items", str(items), "--out", str(o)], "error", name=f"run --out {o.name}")
    case(["sweep", *base, "--epsilons", "inf", "--seeds", "0", "--references", "individual", "--out", str(data)],
         "error", name="sweep --out data")
    case(["audit", *base, "--methods", "kmeans", "--epsilons", "inf", "--runs", "2", "--out", str(data)], "error",
         name="audit --out data")
    case(["report", "--run", str(doc), "--out", str(doc)], "error", name="report --out = --run")
    case(["sweep", *base, "--resume", str(doc), "--out", str(items), "--items", str(items)], "error",
         name="sweep --out = --items")
    case(["sweep", *base, "--resume", str(data)], "error", name="sweep --resume = --data (rewritten)")
    case(["sweep", *base, "--out", os.environ["DPFED_STORE"]], "error", name="sweep --out = store")
    case(["deploy-local", *base, "--method", "dp-popularity", "--out", str(d / "link.csv")], "error",
         name="deploy-local --out = data link")
    case(["write-shards", *base, "--out-dir", str(data)], "error", name="write-shards --out-dir = data")
    # list files: read whole, header recognised, duplicates noted
    variants = {
        "header": ("item\n" + "\n".join(f"i{j}" for j in range(1, 7)) + "\n", 6),
        "comma names": ("i1\ni2\ni3\ni4\ni5\ni6\nsodium chloride 0.9 %, 1000 ml\n", 7),
        "pipe names": ("i1\ni2\ni3\ni4\ni5\ni6\ncardio|shock|vasopressors\n", 7),
        "first line without a name": (",\n" + "\n".join(f"i{j}" for j in range(1, 7)) + "\n", 7),
        "duplicates": ("i1\ni1\ni2\ni3\ni4\ni5\ni6\n", 6),
        "CSV header": ("id,name\n" + "\n".join(f"i{j},drug {j}" for j in range(1, 7)) + "\n", 6),
    }
    for nm, (text, n_items) in variants.items():
        f = d / f"items_{nm.replace(' ', '_')}.txt"
        f.write_text(text)
        case([*run, "--items", str(f)], "result",
             lambda doc, n=n_items: doc["dataset"]["n_items"] == n and doc["dataset"]["n_interactions"] == 108,
             name=f"--items {nm}")
    # hangs and storms
    case([*run, "--items", str(d / "fifo")], "error", name="--items FIFO")
    case([*run, "--items", "/dev/zero"], "error", name="--items /dev/zero")
    case([*run, "--entities", str(d / "fifo")], "error", name="--entities FIFO")
    case(["sweep", *base, "--resume", "/dev/zero"], "error", name="sweep --resume /dev/zero")
    case(["sweep", *base, "--resume", str(d / "fifo")], "error", name="sweep --resume FIFO")
    case(["run", "--data", str(d / "fifo"), *base[2:]], "error", name="--data FIFO")
    case([*run, "--param", "n_jobs=100000"], "error", name="n_jobs=100000")
    # numbers
    for flag, val in (("--epsilon", "1_0"), ("--epsilon", "5e-324"), ("--delta", "1_0e-6"), ("--lam", "0_1"),
                      ("--seed", "1_0"), ("--seed", str(2**64)), ("--k", "1_0"), ("--param", "support=1_0"),
                      ("--param", "support=１")):
        case(["run", *base, "--method", "dp-popularity", "--entities-from-data", flag, val], "error",
             name=f"{flag} {val}")
    case(["sweep", *base, "--seeds", "-1"], "error", name="sweep --seeds -1")
    case(["sweep", *base, "--seeds", str(2**64)], "error", name="sweep --seeds 2^64")
    case(["run", "--data", str(data), "--user-col", "user", "--item-col", "item", "--entity-from", "site",
          "--entity-transform", "prefix:" + "9" * 30, "--value-kind", "implicit"], "error", name="prefix huge")
    # columns, ids, encodings
    case(["run", "--data", str(data), "--user-col", "item", "--item-col", "item", "--entity-col", "site",
          "--value-kind", "implicit", "--method", "popularity"], "error", name="--user-col = --item-col")
    case(["run", "--data", str(data), "--user-col", "user", "--item-col", "item", "--entity-col", "item",
          "--value-kind", "implicit", "--method", "popularity"], "error", name="--entity-col = --item-col")
    na = d / "na.csv"
    _long_table(na, [f"{u},{i},A" for u in ("NA", "None") for i in ("NA", "null", "#N/A", "None", "i1", "i2")])
    case(["run", *base[:1], str(na), *base[2:], "--method", "popularity"], "result",
         lambda doc: doc["dataset"]["n_users"] == 26 and doc["dataset"]["n_items"] == 10, name="NA ids")
    stray = d / "stray.csv"
    _long_table(stray, [f"ü{i},i1,A" for i in range(4000)])
    stray.write_bytes(stray.read_bytes() + b"x\xff,i1,A\n")
    case(["run", *base[:1], str(stray), *base[2:], "--method", "popularity"], "error", name="stray byte after 64 KB")
    blank = d / "blank.csv"
    blank.write_text("user,item,site\n\n\n\n")
    case(["run", *base[:1], str(blank), *base[2:], "--method", "popularity"], "error", name="header then blanks")
    case(["sweep", *base, "--resume", str(deep)], "error", name="--resume deep JSON")
    case(["report", "--run", str(deep), "--out", str(d / "r.html")], "error", name="report --run deep JSON")
    # privacy: an undeclared federation; a tiny ε is never labelled ε = 0
    case(["run", *base, "--method", "dp-popularity", "--epsilon", "1"], "error", name="DP on undeclared entities")
    case(["run", *base, "--method", "dp-cooccurrence", "--entities-from-data", "--epsilon", "1e-6", "--items",
          str(items)], "result", lambda doc: "(ε = 0)" not in doc["privacy"]["label"], name="dp-cooccurrence ε=1e-6")
    # outputs that are no file name, or a link that would be replaced by a file
    case([*run, "--out", ""], "error", name="--out ''")
    case([*run, "--out", str(d / "newdir") + "/"], "error", name="--out newdir/")
    other = d / "other.json"
    other.write_text("{}")
    os.symlink(other, d / "out_link.json")
    case([*run, "--out", str(d / "out_link.json")], "error",
         lambda doc: False, name="--out a symbolic link (not an input)")
    # a one-column list's first line is a header only when it is unambiguous: 'region', 'value' are names
    region = d / "region.csv"
    region.write_text("user,item,site\n" + "\n".join(f"u{e}{i},i{j},{e}" for e in ("region", "B") for i in range(6)
                                                      for j in range(1, 5)) + "\n")
    ents = d / "ents.txt"
    ents.write_text("region\nB\n")
    case(["run", "--data", str(region), "--user-col", "user", "--item-col", "item", "--entity-col", "site",
          "--value-kind", "implicit", "--rank", "2", "--method", "popularity", "--entities", str(ents)], "result",
         lambda doc: doc["dataset"]["n_entities"] == 2, name="--entities first entity named 'region'")
    vals = d / "items_value.txt"
    vals.write_text("Value\n" + "\n".join(f"i{j}" for j in range(1, 7)) + "\n")
    case([*run, "--items", str(vals)], "result", lambda doc: doc["dataset"]["n_items"] == 7,
         name="--items first item named 'Value'")
    # numbers and choices that used to pass without a word, or be reported as another flag's fault
    case(["sweep", *base, "--epsilons", "1,,2"], "error", name="--epsilons 1,,2")
    for pc in ("0", "-2", "1"):
        case(["audit", *base, "--methods", "dp-popularity", "--entities-from-data", "--power-check", pc], "error",
             name=f"--power-check {pc}")
    case(["audit", *base, "--methods", "kmeans", "--with-v", "--rank", "0"], "error", name="--with-v --rank 0")
    case([*run[:-2], "--method", "dp-popularity", "--aggregation", "secure", "--max-dropouts", "99",
          "--entities-from-data", "--dry-run"], "error", name="run --dry-run --max-dropouts past the entities")
    # a dry run checks what the audit itself would refuse: it must not promise an audit that cannot run
    for bad in (["--runs", "-2"], ["--confidence", "2"], ["--epsilons", "-2"], ["--targets", "nobody"],
                ["--attacks", "bogus"], ["--k", "-2"], ["--delta", "5"]):
        case(["audit", *base, "--methods", "dp-popularity", "--entities-from-data", "--dry-run", *bad], "error",
             name=f"audit --dry-run {' '.join(bad)}")
    for pr in ("3_0000-30010", "３００００-30010"):
        case(["deploy-local", *base, "--method", "dp-popularity", "--port-range", pr], "error",
             name=f"--port-range {pr}")
    nul = d / "nul.csv"
    _long_table(nul, [f"u{i}x,i1,A" for i in range(5000)] + ["u\x00z,i2,A"])
    case(["run", *base[:1], str(nul), *base[2:], "--method", "popularity"], "error", name="NUL byte after 64 KB")
    # the error names a flag that exists (misleading advice is checked for every error below)
    miss = d / "missing.csv"
    _long_table(miss, ["uA9,,A"])
    case(["run", *base[:1], str(miss), *base[2:], "--method", "popularity"], "error", name="empty item field")
    return cases


def _classify(c: dict, code, stdout: str, stderr: str, out: Path | None, known: set[str]) -> str:
    if code is None:
        return "hang"
    if "Traceback" in stderr or "Traceback" in stdout or re.search(r"\b(unexpected|internal error)\b", stderr):
        return "crash-worded or misleading error"
    if code == 2:
        named = set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", stderr))
        if not (stderr.startswith("error: ") and stderr.count("\n") == 1) or named - known:
            return "crash-worded or misleading error"
        if out is not None and out.exists():
            return "partial output"
        return "clean error" if c["expect"] == "error" else "silent wrong"
    if code == 0:
        if c["expect"] == "error":
            return "silent wrong"
        if out is None or not out.exists():
            return "partial output"
        try:
            doc = json.loads(out.read_text())
        except ValueError:
            return "partial output"
        return "valid result" if c["check"] is None or c["check"](doc) else "silent wrong"
    return "crash-worded or misleading error"


def test_hostile_inputs_outcome_taxonomy(tmp_path):
    known = _known_flags()
    cases = _hostile_cases(tmp_path)
    counts: Counter = Counter()
    bad = []
    for k, c in enumerate(cases):
        argv = list(c["argv"])
        out = None
        if "--out" not in argv and argv[0] in ("run",):
            out = tmp_path / f"out{k}.json"
            argv += ["--out", str(out)]
        inputs = {p: p.read_bytes() for p in tmp_path.iterdir() if p.is_file() and not p.is_symlink()}
        before = set(p.name for p in tmp_path.iterdir())
        code, stdout, stderr = _run_bounded(argv)
        outcome = _classify(c, code, stdout, stderr, out, known)
        if code is not None and any(p.read_bytes() != b for p, b in inputs.items() if p.exists()):
            outcome = "changed input"
        stray = [n for n in set(p.name for p in tmp_path.iterdir()) - before
                 if out is None or n != out.name]
        if code is not None and stray and outcome not in ("changed input",):
            outcome = "partial output"
        counts[outcome] += 1
        if outcome in BAD_CLASSES:
            bad.append(f"{c['name']}: {outcome} (exit {code}): {stderr.strip()[:200]}")
        if out is not None and out.exists():
            out.unlink()
    print("hostile-input outcomes:", dict(counts))
    assert not bad, "\n".join(bad)
    assert all(counts[b] == 0 for b in BAD_CLASSES), counts
    assert counts["clean error"] >= 30 and counts["valid result"] >= 7, counts

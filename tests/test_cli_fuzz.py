"""Fuzz (issue 12): 200 generated malformed tables and flag combinations through the CLI, run
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
            f += ["--epsilons", r.choice(["1,inf", "0.5,4"]), "--seeds", r.choice(["0", "0,1"]),
                  "--references", "individual"]
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
    assert not failures, "\n".join(failures[:20])
    # the generator must exercise both outcomes, or the test proves little
    assert outcomes.count(0) >= 5 and outcomes.count(2) >= 10, outcomes

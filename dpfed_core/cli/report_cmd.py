"""``python -m dpfed_core report``: the HTML compliance report from result documents."""
from __future__ import annotations

import argparse
from pathlib import Path

from dpfed_core.cli.args import COMMAND_HELP
from dpfed_core.errors import DpfedError


#: The file names the report is written under (an HTML page, never another format's name).
REPORT_SUFFIXES = (".html", ".htm")

EPILOG = """\
examples:
  python -m dpfed_core run --data sample:clinic --method dp-prototypes --epsilon 1 --k 10 \\
      --compare central,individual,random-v,popularity,kmeans --out r.json
  python -m dpfed_core sweep --data sample:clinic --k 10 --out s.json
  python -m dpfed_core audit --data sample:clinic --entity 0 --out a.json
  python -m dpfed_core report --run r.json --sweep s.json --audit a.json --out report.html

The report opens offline (inline CSS and plotly.js). --no-charts gives a small tables-only file.
"""


def register_cli(subparsers) -> argparse.ArgumentParser:
    """Add the ``report`` sub-command to ``python -m dpfed_core``'s sub-parsers."""
    p = subparsers.add_parser("report", help=COMMAND_HELP["report"],
                              formatter_class=argparse.RawDescriptionHelpFormatter, epilog=EPILOG)
    p.add_argument("--run", required=True, help="run result document (JSON) of `python -m dpfed_core run`")
    p.add_argument("--sweep", help="sweep document (JSON) of `python -m dpfed_core sweep`")
    p.add_argument("--audit", help="audit document (JSON) of `python -m dpfed_core audit`")
    p.add_argument("--metric", default="mar", help="metric of the trade-off chart (default mar; one the run "
                                                   "document reports, e.g. mar, test_rmse, precision_at_10)")
    p.add_argument("--title", help="report title")
    p.add_argument("--no-charts", action="store_true", help="tables only, without plotly.js (small file)")
    p.add_argument("--public", action="store_true",
                   help="the public version: no exact per-entity counts, loader notes or named users")
    p.add_argument("--out", required=True, help="write the HTML report here (a name ending in .html)")
    p.set_defaults(func=cmd_report)
    return p


def cmd_report(args) -> int:
    """``python -m dpfed_core report …``."""
    from dpfed_core.cli.args import check_outputs
    from dpfed_core.data.atomic import check_suffix, check_writable
    from dpfed_core.data.inputs import read_json_document
    from dpfed_core.reporting.report import measured_metrics, write_report

    check_writable(args.out, suffix=".html")
    check_outputs(args, ("--out", args.out))  # never overwrite a document it reads
    # the report is HTML only: under a .md or .json name a reader would take it for that format
    check_suffix(args.out, REPORT_SUFFIXES)

    def load_doc(path, flag):
        doc = read_json_document(path, what=flag, param=None)
        if not isinstance(doc, dict):
            raise DpfedError(f"{flag} {path} is not a result document (a JSON object)")
        return doc

    run = load_doc(args.run, "--run")
    # a metric undefined on this run (null: no entity had a test user) is still one of its metrics: the
    # report states it as undefined rather than being refused for it
    known = measured_metrics(run.get("overall"))
    if known and args.metric not in known:
        raise DpfedError(f"--metric {args.metric!r} is not a metric of the run document; choose one of "
                         f"{', '.join(known)}")
    sweep = load_doc(args.sweep, "--sweep") if args.sweep else None
    audit = load_doc(args.audit, "--audit") if args.audit else None
    path = write_report(args.out, run, sweep_doc=sweep, audit_doc=audit, metric=args.metric, title=args.title,
                        include_plotlyjs=not args.no_charts, public=args.public)
    print(f"wrote {path} ({path.stat().st_size / 1e6:.1f} MB)")
    return 0

"""Command line: `python -m model measure|check|accept|render`.

    python -m model measure --sentences FILE [--model minilm-l6|minilm-l3|PATH] [--all-heads] --json
    python -m model check [--site DIR] [--perturb SCALE[:SEED]]
                                         the measurements (through the cache) and the numbers gate;
                                         with --site, also a built site's pages: no live markup left;
                                         with --perturb, on another machine's rounding, simulated
                                         (model/perturb.py): the lock must hold there too
    python -m model accept [--exact]     rewrite the numbers lock from fresh results, print the diff
                                         (exit 1 if a claim no longer holds or a pick is nearer a tie
                                         than the floor: the lock cannot fix those); --exact: every
                                         value as computed here, rounding noise included
    python -m model numbers [PATTERN]    the keys a page can cite: value, interval, lock, citing pages
    python -m model render OUT           the project with every page rendered, for builders without hooks

Errors a user can fix print one line and exit with status 2.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

DEFAULT_STUDY = Path("docs/study.yml")


def cmd_measure(args) -> int:
    from . import measure, results, study, weights
    from .corpus import read_corpus

    if not args.json:
        print("error: pass --json (the only output format)", file=sys.stderr)
        return 2
    st = study.with_sentences(study.load(args.study), args.sentences, args.model)
    spec = st.models[0]
    ckpt = weights.load(spec.name)
    if args.all_heads:
        out = {"provenance": results.provenance(st), "rows": measure.all_head_rows(read_corpus(ckpt, st))}
    else:
        r = results.plain(measure.measure_model(ckpt, st, spec.key).results)
        out = {
            "provenance": results.provenance(st),
            "model": r["model"],
            "summary": r["summary"],
            "verdicts": r["verdicts"],
            "rows": r["rows"],
        }
    # One write of the whole text: json.dump writes each of its ~800,000 pieces on its own.
    sys.stdout.write(json.dumps(out, indent=1) + "\n")
    return 0


def _settings():
    from .site.gate import Settings

    return Settings.at(Path.cwd())  # the project's layout: docs/, docs/study.yml, .cache/


def cmd_check(args) -> int:
    import os

    from . import perturb
    from .site import gate, render

    if args.perturb:
        os.environ[perturb.ENV] = args.perturb   # read by the measurement, and part of its cache key
        print(f"numbers gate on another machine, simulated: {perturb.describe_env()}")
    settings = _settings()
    report = gate.run(settings)
    print(
        f"numbers gate: {len(report.cited)} cited numbers on {len(report.rendered) + len(report.notebook_cells)} pages, "
        f"results {report.results_key[:12]}"
    )
    status = 0
    if report.ok:
        print("numbers gate: every cited number matches the lock and every claim holds")
    else:
        print(report.message(settings.lock), file=sys.stderr)
        status = 1
    if args.site is not None:
        left = render.leftover_markup(args.site)
        if left:
            print(f"{args.site}: {len(left)} live call(s) were published unrendered (built without the hooks? "
                  "publish `python -m model render` output instead):", file=sys.stderr)
            print("\n".join(f"  {line}" for line in left), file=sys.stderr)
            status = 1
        else:
            print(f"built site {args.site}: no live markup left on its pages")
    return status


def cmd_render(args) -> int:
    from .site import render

    report = render.write_tree(args.config, args.out)
    pages = len(report.rendered) + len(report.notebook_cells)
    print(f"rendered {pages} pages ({len(report.cited)} cited numbers, results {report.results_key[:12]}) "
          f"into {args.out}; build it with: cd {args.out} && mkdocs build --strict")
    return 0


def cmd_accept(args) -> int:
    from .site import gate

    accepted = gate.accept(_settings(), exact=args.exact)
    print(accepted.text)
    return 0 if not (accepted.failed_claims or accepted.fragile) else 1


def cmd_numbers(args) -> int:
    from .site import finder

    print(finder.listing(_settings(), args.pattern, limit=args.limit))
    return 0


def main(argv: list[str] | None = None) -> int:
    from .errors import UserError

    parser = argparse.ArgumentParser(prog="python -m model", description=__doc__.split("\n")[0])
    parser.add_argument("--study", default=DEFAULT_STUDY, type=Path, help="study file (default docs/study.yml)")
    sub = parser.add_subparsers(dest="command", required=True)
    m = sub.add_parser("measure", help="measure the instrument's rows on your own sentences")
    m.add_argument("--sentences", required=True, type=Path, help="one sentence a line, UTF-8")
    m.add_argument("--model", default=None, help="minilm-l6 (default), minilm-l3, or a model folder")
    m.add_argument("--all-heads", action="store_true", help="one record per (sentence, word, layer, head)")
    m.add_argument("--json", action="store_true", help="write JSON to stdout")
    m.set_defaults(run=cmd_measure)
    c = sub.add_parser("check", help="run the measurements (cached) and the numbers gate")
    c.add_argument("--site", type=Path, default=None,
                   help="also check a built site's folder: no page may show live markup such as {{ num(")
    c.add_argument("--perturb", default=None, metavar="SCALE[:SEED]",
                   help="measure with every layer's output nudged by this relative scale (1e-6): another CPU's rounding")
    c.set_defaults(run=cmd_check)
    a = sub.add_parser("accept", help="rewrite the numbers lock from fresh results, print the diff")
    a.add_argument("--exact", action="store_true",
                   help="write every value as computed here, rounding noise included (the lock's machine changed)")
    a.set_defaults(run=cmd_accept)
    n = sub.add_parser("numbers", help="list the keys a page can cite (substring and fuzzy match)")
    n.add_argument("pattern", nargs="?", default="", help="words of the key (l6 median sink), or a key misspelt")
    n.add_argument("--limit", type=int, default=40, help="at most this many keys (0: all)")
    n.set_defaults(run=cmd_numbers)
    r = sub.add_parser("render", help="write the project with every page rendered, for builders without hooks")
    r.add_argument("out", type=Path, help="folder to write (replaced if an earlier render wrote it)")
    r.add_argument("--config", type=Path, default=Path("mkdocs.yml"), help="the project's mkdocs.yml")
    r.set_defaults(run=cmd_render)
    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())

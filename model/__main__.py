"""Command line: `python -m model measure|check|accept|numbers|render|backfill` (the engine's commands,
livenumbers/__main__.py, on the study; `measure` is the study's own).

    python -m model measure --sentences FILE [--model minilm-l6|minilm-l3|PATH] [--all-heads] --json
    python -m model measure --results FILE [--workers N | --scheduler ADDRESS]
                                         the whole study, as a build measures it, into FILE
                                         (results.json); its maps on N local worker processes or
                                         on a running Dask cluster (model/cluster.py)
    python -m model measure-large [--workers N | --scheduler ADDRESS] [--limit N] [--results FILE]
                                         minilm-l6 on every WordNet example (model/large.py;
                                         `make measure-large`, not part of the site's build)
    python -m model check [--site DIR] [--perturb [SCALE]:SEED] [--same-text-as CACHE]
                                         the measurements (through the cache) and the numbers gate;
                                         with --site, also a built site's pages: no live markup left;
                                         with --perturb, on another machine's rounding, simulated
                                         (model/perturb.py; the scale study.yml registers by default):
                                         the lock must hold there too, and every page of both
                                         editions read as this machine's build reads it; with
                                         --same-text-as, the same against the results in CACHE
                                         (`make check-machines` runs both)
    python -m model accept [--exact] [--reason TEXT [--reason-in fr TEXT] | --local]
                                         rewrite the numbers lock from fresh results, print the diff;
                                         nothing is written (exit 1) while a claim fails, a pick is
                                         nearer a tie than the floor, a printed text is within
                                         rounding of another or a discrete number has no margin, nor
                                         while a change readers see (a printed text, a number added or
                                         removed) has no reason: --reason says why, for readers, kept in
                                         the lock's history and shown on the pages (livenumbers/history.py);
                                         --local: a lock for this machine only, nothing recorded;
                                         --exact: every value as computed here, rounding noise included
    python -m model backfill docs/numbers.reasons.yml
                                         the lock's history from git: an entry per past change readers
                                         saw, each with its reason from that file (livenumbers/backfill.py)
    python -m model numbers [PATTERN]    the keys a page can cite: value, interval, lock, citing pages
    python -m model render OUT           the project with every page rendered, for builders without hooks

Errors a user can fix print one line and exit with status 2.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import sys
from pathlib import Path

DEFAULT_STUDY = Path("docs/study.yml")


def cmd_measure(args) -> int:
    from livenumbers import progress

    from . import cluster, measure, results, study, weights
    from .corpus import read_corpus

    if args.results:
        with contextlib.closing(cluster.from_settings(args.workers, args.scheduler)) as runner:
            with progress.watching(f"measuring the study {runner.describe()}"):
                out, _ = results.compute(args.study, runner=runner)
        results.write_json(args.results, out)
        return 0
    if args.sentences is None:
        print("error: pass --sentences FILE (your own sentences) or --results FILE (the study)", file=sys.stderr)
        return 2
    if not args.json:
        print("error: pass --json (the only output format)", file=sys.stderr)
        return 2
    st = study.with_sentences(study.load(args.study), args.sentences, args.model)
    spec = st.models[0]
    ckpt = weights.load(spec.name)
    # The maps (the forward passes in batches) run where --workers or --scheduler say, as the
    # whole study's do: the same bytes as in this process.
    with contextlib.closing(cluster.from_settings(args.workers, args.scheduler)) as runner, cluster.using(runner):
        if args.workers or args.scheduler:
            print(f"measuring {args.sentences} {runner.describe()}", file=sys.stderr)
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


def cmd_measure_large(args) -> int:
    from . import cluster, large, study

    st = study.load(args.study)
    with contextlib.closing(cluster.from_settings(args.workers, args.scheduler)) as runner:
        print(f"measuring the large corpus {runner.describe()}", file=sys.stderr)
        figures = large.measure(st, runner, args.limit)
    large.write(args.results, figures)
    print(large.summary(figures))
    print(f"written to {args.results}", file=sys.stderr)
    return 0


def _settings(args):
    """The engine's settings as mkdocs.yml (--config) gives them, as the build reads them."""
    from livenumbers import project
    from livenumbers.__main__ import CONFIG

    return project.settings_at(getattr(args, "config", CONFIG))


def cmd_engine(args) -> int:
    """check, accept, numbers, render: the engine's commands (livenumbers/__main__.py) on the study.
    `check --perturb` and `check --same-text-as` are another machine: after its gate, every page
    of both editions must read as this machine's build reads it."""
    import os

    from livenumbers.__main__ import run_command

    from . import perturb
    from .errors import UserError

    perturbation, here = getattr(args, "perturb", None), getattr(args, "same_text_as", None)
    if here is not None and not here.is_dir():
        raise UserError(f"--same-text-as {here}: no such folder (it holds this machine's results: make site first)")
    settings = _settings(args)
    if perturbation is not None:
        scale, _, seed = perturbation.partition(":")
        nudge = scale or _study_nudge(settings.source.study)   # the study mkdocs.yml names, as the build reads it
        os.environ[perturb.ENV] = f"{nudge}:{seed or 0}"   # read by the measurement, and part of its cache key
        print(f"numbers gate on another machine, simulated: {perturb.describe_env()}")
    status = run_command(args, settings)
    if status or (perturbation is None and here is None):
        return status
    return same_text_as_this_machine(args, here)


def _study_nudge(study: Path) -> float:
    """study.yml's simulated machine: the relative nudge it registers (`simulated_machine.nudge`)."""
    from . import study as study_mod

    return study_mod.load(study).simulated_machine.nudge


def same_text_as_this_machine(args, cache: Path | None = None) -> int:
    """After another machine's gate: every page, both editions, must read exactly as this
    machine's build reads it: its results from `cache` (another kernel path's run keeps its
    own), or, under a simulated machine, from this project's cache (measured here if missing).
    0 if so."""
    import os

    from livenumbers import gate
    from livenumbers.report import published_text, text_differences

    from . import perturb

    other = published_text(gate.run(_settings(args), with_charts=True))
    os.environ.pop(perturb.ENV, None)
    if cache is not None:
        os.environ["LIVE_NUMBERS_CACHE"] = str(cache.resolve())
    here = published_text(gate.run(_settings(args), with_charts=True))
    differences = text_differences(here, other)
    if differences:
        print(f"another machine publishes other text than this one on "
              f"{len({d.split(':', 1)[0] for d in differences})} page(s):", file=sys.stderr)
        print("\n".join(f"  {d}" for d in differences), file=sys.stderr)
        return 1
    print(f"another machine publishes the same text as this one on all {len(here)} pages")
    return 0


def main(argv: list[str] | None = None) -> int:
    from livenumbers.__main__ import add_commands, add_config

    from .errors import UserError

    parser = argparse.ArgumentParser(prog="python -m model", description=__doc__.split("\n")[0])
    parser.add_argument("--study", default=DEFAULT_STUDY, type=Path,
                        help="study file for measure and measure-large (default docs/study.yml); the site's "
                             "commands read mkdocs.yml's (--config)")
    add_config(parser)
    sub = parser.add_subparsers(dest="command", required=True)
    m = sub.add_parser("measure", help="measure the instrument's rows on your own sentences")
    m.add_argument("--sentences", type=Path, help="one sentence a line, UTF-8")
    m.add_argument("--results", type=Path, help="measure the whole study, write its results.json here")
    m.add_argument("--workers", type=int, default=None, help="run the maps on N local worker processes")
    m.add_argument("--scheduler", default=None, help="run the maps on the Dask cluster at this address")
    m.add_argument("--model", default=None, help="minilm-l6 (default), minilm-l3, or a model folder")
    m.add_argument("--all-heads", action="store_true", help="one record per (sentence, word, layer, head)")
    m.add_argument("--json", action="store_true", help="write JSON to stdout")
    m.set_defaults(run=cmd_measure)
    g = sub.add_parser("measure-large", help="minilm-l6 on every WordNet example (not the site's build)")
    g.add_argument("--workers", type=int, default=None, help="run the map on N local worker processes")
    g.add_argument("--scheduler", default=None, help="run the map on the Dask cluster at this address")
    g.add_argument("--limit", type=int, default=None, help="the first N sentences only (in hash order)")
    g.add_argument("--results", type=Path, default=Path(".cache/large.json"), help="where the figures go")
    g.set_defaults(run=cmd_measure_large)
    add_commands(sub)
    sub.choices["check"].add_argument("--perturb", default=None, metavar="[SCALE]:SEED",
                                      help="measure with every layer's attention weights and output nudged by this "
                                           "relative scale (study.yml's simulated_machine.nudge if left out): another "
                                           "machine's rounding; then compare every page's text with this machine's")
    sub.choices["check"].add_argument("--same-text-as", default=None, type=Path, metavar="CACHE",
                                      help="after the gate, compare every page's text with a build from the results "
                                           "in CACHE (this machine's, for a run on another kernel path)")
    for name in ("check", "accept", "numbers", "render", "backfill"):
        sub.choices[name].set_defaults(run=cmd_engine)
    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())

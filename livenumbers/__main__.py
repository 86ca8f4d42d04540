"""Command line for any write-up on the engine: `python -m livenumbers check|accept|render|numbers`.

    python -m livenumbers check [--site DIR]   the results (through the cache) and the drift gate;
                                               with --site, a built site's pages: no live markup left
    python -m livenumbers accept [--exact] [--reason TEXT [--reason-in LANG TEXT] | --local]
                                               rewrite the numbers lock from fresh results, print the diff;
                                               a change readers see needs a reason, kept in the lock's
                                               history (--local: this machine's lock, nothing recorded)
    python -m livenumbers backfill REASONS     the lock's history from git: an entry for each commit
                                               that changed what the pages print, its reason from REASONS
    python -m livenumbers numbers [PATTERN]    the keys a page can cite
    python -m livenumbers render OUT           the project with every page rendered, for builders
                                               that run no plugin or hook
    python -m livenumbers new FOLDER [--french]
                                               a new write-up to start from (the starter: a page
                                               with a number, a table, a chart, a claim, a citation,
                                               a number measured here; with --french, its French edition)

Each reads the project's mkdocs.yml (--config, before or after the command) as MkDocs loads
it, whose live-numbers options name the source (livenumbers/project.py).
Errors a user can fix print one line and exit with status 2.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path


def run_command(args, settings) -> int:
    """One command on a project's settings (`python -m model` runs these on the study)."""
    from . import accepting, finder, gate, render

    if args.command == "check":
        report = gate.run(settings)
        print(f"numbers gate: {len(report.cited)} cited numbers on {len(report.rendered) + len(report.notebook_cells)} "
              f"pages, results {report.results_key[:12]}")
        status = 0
        if report.ok:
            print("numbers gate: every cited number matches the lock and every claim holds")
        else:
            print(report.message(settings.lock), file=sys.stderr)
            status = 1
        if args.site is not None:
            left = render.leftover_markup(args.site, settings.source)
            if left:
                print(f"{args.site}: {len(left)} live call(s) were published unrendered (built without the engine? "
                      "publish `render` output instead):", file=sys.stderr)
                print("\n".join(f"  {line}" for line in left), file=sys.stderr)
                status = 1
            else:
                print(f"built site {args.site}: no live markup left on its pages")
        return status
    if args.command == "accept":
        reason = ({settings.languages.default: args.reason} if args.reason else {}) | dict(args.reason_in or [])
        accepted = accepting.accept(settings, exact=args.exact, reason=reason or None, local=args.local)
        print(accepted.text)
        return 1 if accepted.refused else 0
    if args.command == "backfill":
        from . import backfill

        print(backfill.run(settings, args.reasons))
        return 0
    if args.command == "numbers":
        print(finder.listing(settings, args.pattern, limit=args.limit))
        return 0
    if args.command == "render":
        report = render.write_tree(settings, args.out)
        pages = len(report.rendered) + len(report.notebook_cells)
        print(f"rendered {pages} pages ({len(report.cited)} cited numbers, results {report.results_key[:12]}) "
              f"into {args.out}; build it with: cd {args.out} && mkdocs build --strict")
        return 0
    raise ValueError(f"unknown command {args.command!r}")


CONFIG = Path("mkdocs.yml")


def add_config(parser) -> None:
    """`--config FILE`, before the command or after it (`check --config site/mkdocs.yml`)."""
    parser.add_argument("--config", type=Path, default=argparse.SUPPRESS,
                        help=f"the project's mkdocs.yml (default {CONFIG})")


def add_commands(sub) -> None:
    """The engine's subcommands, on an argparse subparsers object, each taking `--config`."""
    c = sub.add_parser("check", help="compute the results (cached) and run the numbers gate")
    c.add_argument("--site", type=Path, default=None,
                   help="also check a built site's folder: no page may show live markup such as {{ num(")
    a = sub.add_parser("accept", help="rewrite the numbers lock from fresh results, print the diff")
    a.add_argument("--exact", action="store_true",
                   help="write every value as computed here, rounding noise included (the lock's machine changed)")
    why = a.add_mutually_exclusive_group()
    why.add_argument("--reason", default=None,
                     help="why the pages' numbers changed, for readers (one sentence, at most 200 characters): "
                          "kept in the lock's history and shown beside the numbers")
    why.add_argument("--local", action="store_true",
                     help="a lock for this machine only (yours, where the committed one fails): no reason asked, "
                          "nothing recorded in the history")
    a.add_argument("--reason-in", nargs=2, action="append", metavar=("LANG", "TEXT"),
                   help="the reason in another of the site's languages (--reason-in fr \"...\"); "
                        "without it, that edition shows the reason as written, marked as in the site's language")
    b = sub.add_parser("backfill", help="write the lock's history from its git history, with reasons for readers")
    b.add_argument("reasons", type=Path,
                   help="a YAML file: each commit that changed what the pages print -> its reason ({en: ..., fr: ...})")
    n = sub.add_parser("numbers", help="list the keys a page can cite (substring and fuzzy match)")
    n.add_argument("pattern", nargs="?", default="", help="words of the key, or a key misspelt")
    n.add_argument("--limit", type=int, default=40, help="at most this many keys (0: all)")
    r = sub.add_parser("render", help="write the project with every page rendered, for builders without the engine")
    r.add_argument("out", type=Path, help="folder to write (replaced if an earlier render wrote it)")
    for parser in (c, a, b, n, r):
        add_config(parser)


STARTER = Path(__file__).parent / "starter"
FRENCH = Path(__file__).parent / "starter_fr"   # what --french adds: index.fr.md, its catalogue, the i18n plugin


def new_writeup(folder: Path, french: bool = False) -> str:
    """Copy the starter into `folder` (new, or empty), with a French edition if `french`;
    what to run next."""
    import shutil

    from .errors import UserError

    if folder.exists() and any(folder.iterdir()):
        raise UserError(f"{folder}: exists and is not empty; choose a new folder")
    ignore = shutil.ignore_patterns("__pycache__", ".cache", "site")
    shutil.copytree(STARTER, folder, dirs_exist_ok=True, ignore=ignore)
    (folder / ".gitignore").write_text(".cache/\nsite/\n", encoding="utf-8")
    if french:
        shutil.copytree(FRENCH / "docs", folder / "docs", dirs_exist_ok=True, ignore=ignore)
        config = folder / "mkdocs.yml"
        config.write_text(_with_i18n(config.read_text(encoding="utf-8")), encoding="utf-8")
    pages = "docs/index.md and docs/index.fr.md (its pages), docs/locales/fr.yml (their French words)" if french \
        else "docs/index.md (its page)"
    return (f"wrote a write-up into {folder}: mkdocs.yml, toy_source.py (its results), {pages}\n"
            f"next: cd {folder} && python -m livenumbers accept && mkdocs build --strict  (or mkdocs serve)")


def _with_i18n(mkdocs_yml: str) -> str:
    """The starter's mkdocs.yml with mkdocs-static-i18n listed first (starter_fr/i18n.yml, its
    comments kept) and the theme's language set, so each edition speaks its own."""
    lines = (FRENCH / "i18n.yml").read_text(encoding="utf-8").splitlines()
    comments = [f"  {line}" for line in lines if line.startswith("#")]
    body = [line for line in lines if line and not line.startswith("#")]
    item = ["  - " + body[0]] + [f"    {line}" for line in body[1:]]
    return mkdocs_yml.replace("plugins:\n", "theme:\n  name: mkdocs\n  language: en\nplugins:\n"
                              + "\n".join(comments + item) + "\n", 1)


def main(argv: list[str] | None = None) -> int:
    from . import project
    from .errors import UserError

    parser = argparse.ArgumentParser(prog="python -m livenumbers", description=__doc__.split("\n")[0])
    add_config(parser)
    sub = parser.add_subparsers(dest="command", required=True)
    add_commands(sub)
    new = sub.add_parser("new", help="write a new write-up to start from")
    new.add_argument("folder", type=Path)
    new.add_argument("--french", action="store_true", help="with a French edition (needs livenumbers[i18n])")
    args = parser.parse_args(argv)
    try:
        if args.command == "new":
            print(new_writeup(args.folder, french=args.french))
            return 0
        return run_command(args, project.settings_at(getattr(args, "config", CONFIG)))
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())

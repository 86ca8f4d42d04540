"""The engine renders its own calls and leaves every other template construct as written
(livenumbers/ownership.py): another plugin's variables and statements, a workflow's braces in
a code block, a template shown as an example. On the starter's source, no model."""
from __future__ import annotations

import importlib.util
import json

import pytest

from livenumbers.markup import PageError, Renderer

from test_toy import TOY


@pytest.fixture(scope="module")
def toy_renderer() -> Renderer:
    spec = importlib.util.spec_from_file_location("toy_source_for_ownership", TOY / "toy_source.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    source = module.ToySource(TOY / "docs" / "data.json")
    results, _ = source.compute()
    return Renderer(source, results, charts=lambda chart_id: {})


def render(renderer: Renderer, text: str, templated_after: bool = False) -> str:
    renderer.templated_after = templated_after
    return renderer.render("index.md", text).text


FOREIGN = [
    "{{ icebergVersion }}",                                 # mkdocs-macros' variable
    "{{ config.site_name | upper }}",                       # ... with a filter
    '- run: echo "${{ github.sha }}"',                       # a GitHub Actions step
    "{% if config.extra.beta %}beta{% endif %}",            # another plugin's statement
    '{% include "note.md" %}',                               # ... which the engine never owns
    "{{ page.meta.title }}",
    "${#array[@]} and {{ unclosed",                          # not constructs at all
]


@pytest.mark.parametrize("text", FOREIGN)
@pytest.mark.parametrize("templated_after", [False, True], ids=["engine-alone", "macros-after"])
def test_a_construct_that_is_not_the_engines_is_left_as_written(toy_renderer, text, templated_after):
    page = f'In all {{{{ num("total", "int") }}}} points.\n{text}\n'
    assert render(toy_renderer, page, templated_after) == f"In all 20 points.\n{text}\n"


def test_the_engines_statements_and_the_names_they_bind_are_rendered(toy_renderer):
    page = ('{% for name in ["apple", "pear"] %}{{ loop.index }}. {{ num("fruit." ~ name ~ ".score") }} '
            '{% endfor %}\n{% set key = "total" %}{{ num(key) }}\n')
    assert render(toy_renderer, page) == "1. 12 2. 5 \n20\n"


def test_a_foreign_statement_around_an_engine_call_keeps_its_markers_for_its_owner(toy_renderer):
    page = '{% if config.extra.beta %}{{ num("total") }}{% endif %}\n'
    assert render(toy_renderer, page, templated_after=True) == "{% if config.extra.beta %}20{% endif %}\n"


def test_raw_blocks_and_comments_are_left_to_a_templating_plugin_after_the_engine(toy_renderer):
    page = '{% raw %}`{{ num("total") }}`{% endraw %} {# a note #}{{ num("total") }}\n'
    assert render(toy_renderer, page) == '`{{ num("total") }}` 20\n'                   # the engine alone
    assert render(toy_renderer, page, templated_after=True) == '{% raw %}`{{ num("total") }}`{% endraw %} {# a note #}20\n'


def test_lines_are_kept_so_problems_name_the_pages_line(toy_renderer):
    page = '{% raw %}\na\nb\n{% endraw %}\n{{ other }}\n{{ other\n}}\n{{ num("fruit.kiwi.score") }}\n'
    with pytest.raises(PageError, match=r"index.md:8: unknown number 'fruit.kiwi.score'"):
        render(toy_renderer, page, templated_after=True)


@pytest.mark.parametrize("text, message", [
    ('{{ nmu("total") }}', "index.md:1: unknown function 'nmu'; did you mean 'num'?"),
    ("{{ nmu }}", "index.md:1: 'nmu' is undefined; did you mean 'num'?"),
])
def test_a_misspelt_page_function_is_a_problem_when_no_other_plugin_could_own_it(toy_renderer, text, message):
    with pytest.raises(PageError) as caught:
        render(toy_renderer, text + "\n")
    assert str(caught.value) == message
    assert render(toy_renderer, text + "\n", templated_after=True) == text + "\n"   # mkdocs-macros' to judge


def test_the_text_set_aside_comes_back_byte_for_byte(toy_renderer):
    page = json.dumps({"a": "{{ x }}", "b": "{% y %}"}) + '\n{{ num("total") }}\n'
    assert render(toy_renderer, page) == json.dumps({"a": "{{ x }}", "b": "{% y %}"}) + "\n20\n"

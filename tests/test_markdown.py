"""Organisers' Markdown becomes safe HTML: formatting kept, anything active neutralised.

Two layers: markdown-it escapes raw HTML and refuses unsafe link targets; nh3 then keeps
only the allowed tags and attributes. The last tests switch the first layer's escaping
off, so that the second is tested on its own (it must hold if the first ever changes).
"""

import pytest
from markdown_it import MarkdownIt

from challenge_site import markdown
from challenge_site.markdown import plain_text, render_markdown


def test_headings_and_paragraphs():
    assert render_markdown("# Title\n\n## Part\n\nSome text.") == (
        "<h1>Title</h1>\n<h2>Part</h2>\n<p>Some text.</p>\n"
    )


def test_emphasis_strong_strikethrough_and_code():
    html = render_markdown("*slanted* **bold** ~~gone~~ `x = 1`")
    assert html == (
        "<p><em>slanted</em> <strong>bold</strong> <s>gone</s> <code>x = 1</code></p>\n"
    )


def test_lists_and_code_blocks():
    html = render_markdown("1. one\n2. two\n\n- a\n\n```python\nprint(1)\n```")
    assert "<ol>\n<li>one</li>\n<li>two</li>\n</ol>" in html
    assert "<ul>\n<li>a</li>\n</ul>" in html
    assert '<pre><code class="language-python">print(1)\n</code></pre>' in html


def test_tables_keep_their_alignment():
    html = render_markdown("| loss | value |\n|:--|--:|\n| nlpd | 0.5 |")
    assert '<th style="text-align:left">loss</th>' in html
    assert '<th style="text-align:right">value</th>' in html
    assert '<td style="text-align:left">nlpd</td>' in html
    assert '<td style="text-align:right">0.5</td>' in html
    assert html.startswith("<table>\n<thead>") and "<tbody>" in html


def test_links_get_nofollow_noopener():
    html = render_markdown('[the paper](https://example.org/paper.pdf "PDF")')
    assert html == (
        '<p><a href="https://example.org/paper.pdf" title="PDF" rel="nofollow noopener">'
        "the paper</a></p>\n"
    )
    assert 'href="mailto:org@example.org"' in render_markdown("[mail](mailto:org@example.org)")


def test_images_are_kept():
    html = render_markdown('![A plot](https://example.org/plot.png "Fig. 1")')
    assert html == ('<p><img src="https://example.org/plot.png" alt="A plot" title="Fig. 1"></p>\n')


def test_images_from_data_urls_lose_their_source():
    """markdown-it lets raster data: images through; nh3 then drops their source."""
    html = render_markdown("![x](data:image/png;base64,iVBORw0KGgo=)")
    assert html == '<p><img alt="x"></p>\n'


@pytest.mark.parametrize(
    "source",
    [
        "<script>alert(1)</script>",
        "<img src=x onerror=alert(1)>",
        '<div style="color:red">x</div>',
        "<b>raw</b>",
        '<iframe src="https://example.org"></iframe>',
        "<a href='https://example.org' onclick='steal()'>z</a>",
    ],
)
def test_raw_html_is_shown_as_text_not_markup(source):
    html = str(render_markdown(source))
    assert "<" + source[1:] not in html  # the tag itself never survives
    assert html.startswith("<p>&lt;") and html.endswith("</p>\n")
    for active in ("<script", "<img", "<div", "<b>", "<iframe", "<a "):
        assert active not in html


@pytest.mark.parametrize(
    "source",
    [
        "[x](javascript:alert(1))",
        "[x](JaVaScRiPt:alert(1))",
        "[x](vbscript:msgbox(1))",
        "![x](javascript:alert(1))",
        "[x](data:text/html;base64,PHNjcmlwdD4=)",
    ],
)
def test_unsafe_link_targets_do_not_become_links(source):
    html = str(render_markdown(source))
    assert "<a" not in html and "<img" not in html
    assert "href" not in html and "src" not in html


def test_empty_and_none_render_as_nothing():
    assert render_markdown("") == "" and render_markdown(None) == ""


def test_plain_text_is_the_markdown_source_trimmed():
    assert plain_text("  # Title\n\n*Hi*  \n") == "# Title\n\n*Hi*"
    assert plain_text(None) == ""


# --- The sanitiser alone (raw HTML let through by the first layer) ----------------------


@pytest.fixture
def raw_html_allowed(monkeypatch):
    renderer = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
    monkeypatch.setattr(markdown, "_RENDERER", renderer)


def test_sanitiser_drops_scripts_styles_and_frames(raw_html_allowed):
    html = str(
        render_markdown(
            "<script>alert(1)</script>\n\n<style>body{}</style>\n\n"
            '<iframe src="https://example.org"></iframe>\n\nkept'
        )
    )
    assert html.strip() == "<p>kept</p>"


def test_sanitiser_drops_event_handlers(raw_html_allowed):
    html = str(render_markdown('<img src="https://example.org/a.png" onerror="alert(1)">'))
    assert html == '<img src="https://example.org/a.png">'


def test_sanitiser_drops_javascript_urls(raw_html_allowed):
    assert str(render_markdown('<a href="javascript:alert(1)">x</a>')) == (
        '<p><a rel="nofollow noopener">x</a></p>\n'
    )
    assert str(render_markdown('<img src="javascript:alert(1)">')) == "<img>"


def test_sanitiser_keeps_only_text_align_in_styles(raw_html_allowed):
    html = str(
        render_markdown(
            '<table><tr><td style="color:red; text-align: center; background:url(x)">x</td>'
            '</tr></table>\n\n<p style="text-align:center">p</p>'
        )
    )
    assert '<td style="text-align:center">x</td>' in html
    assert "color" not in html and "url(" not in html
    assert "<p>p</p>" in html  # no style at all outside table cells


def test_sanitiser_overrides_the_authors_rel(raw_html_allowed):
    html = str(render_markdown('<a href="https://example.org" rel="opener">y</a>'))
    assert html == '<p><a href="https://example.org" rel="nofollow noopener">y</a></p>\n'

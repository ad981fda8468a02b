"""challenges' ``markdown`` template filter: organisers' Markdown as safe HTML in the
challenge's pages (the renderer itself: tests/test_markdown.py)."""

from django.template import Context, Template
from django.utils.safestring import SafeString

from challenge_site.markdown import render_markdown


def test_result_is_safe_for_templates_and_the_filter_uses_it():
    assert isinstance(render_markdown("x"), SafeString)
    template = Template("{% load markdown %}{{ text|markdown }}")
    rendered = template.render(Context({"text": "**hi** <script>x()</script>"}))
    assert rendered == "<p><strong>hi</strong> &lt;script&gt;x()&lt;/script&gt;</p>\n"

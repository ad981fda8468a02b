"""Organisers' texts (challenge, dataset, rules, announcements) from Markdown to safe HTML.

markdown-it-py renders CommonMark with tables and strikethrough (raw HTML in the source
is escaped, not passed on); nh3 then keeps only the tags and attributes below, so that
neither a typo nor a compromised organiser account can put a script, a style or an
event handler on a page. Links and images are allowed; links get ``rel="nofollow
noopener"``, and only http(s) and mailto links and http(s) images survive.
"""

from __future__ import annotations

import nh3
from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt

_RENDERER = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
_RENDERER.enable(["table", "strikethrough"])

TAGS = {
    "a", "abbr", "blockquote", "br", "code", "del", "em", "h1", "h2", "h3", "h4", "h5",
    "h6", "hr", "img", "li", "ol", "p", "pre", "s", "strong", "sub", "sup", "table", "tbody",
    "td", "th", "thead", "tr", "ul",
}  # fmt: skip
ATTRIBUTES = {
    "a": {"href", "title"},
    "img": {"src", "alt", "title", "width", "height"},
    "th": {"style"},
    "td": {"style"},
    "ol": {"start"},
    "code": {"class"},
}
URL_SCHEMES = {"http", "https", "mailto"}


def render_markdown(text: str) -> SafeString:
    """``text`` (Markdown) as sanitised HTML, safe to put in a template as it is."""
    html = _RENDERER.render(text or "")
    clean = nh3.clean(
        html,
        tags=TAGS,
        attributes=ATTRIBUTES,
        url_schemes=URL_SCHEMES,
        link_rel="nofollow noopener",
        filter_style_properties={"text-align"},
    )
    return mark_safe(clean)  # noqa: S308 - sanitised by nh3 just above


def plain_text(text: str) -> str:
    """``text`` as it reads without markup (for README.txt and e-mails): the Markdown
    source itself, which is meant to read well as plain text."""
    return (text or "").strip()

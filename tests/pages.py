import html
import re


def page_text(response) -> str:
    """The page as a reader sees it: tags dropped, entities decoded, whitespace collapsed."""
    text = re.sub(r"<[^>]+>", " ", response.content.decode())
    return html.unescape(re.sub(r"\s+", " ", text)).strip()

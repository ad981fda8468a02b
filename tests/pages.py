import html
import re


def page_text(response) -> str:
    """The page as a reader sees it: tags dropped, entities decoded, whitespace collapsed."""
    # A <wbr> is a place a line may break, not a space.
    text = re.sub(r"<[^>]+>", " ", re.sub(r"<wbr\s*/?>", "", response.content.decode()))
    return html.unescape(re.sub(r"\s+", " ", text)).strip()

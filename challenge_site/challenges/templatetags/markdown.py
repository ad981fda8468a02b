from django import template

from challenge_site.markdown import render_markdown

register = template.Library()


@register.filter(name="markdown")
def markdown_filter(text: str):
    """``{{ challenge.description|markdown }}``: sanitised HTML from Markdown."""
    return render_markdown(text)

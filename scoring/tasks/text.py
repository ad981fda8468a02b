"""Plain text for the README of a dataset's zip: headings, paragraphs, bullets and
examples, wrapped at :data:`WIDTH` columns (datasets/readme.py and each task's
:meth:`~scoring.taskspec.TaskSpec.format_help`)."""

from __future__ import annotations

import textwrap

WIDTH = 78


def heading(text: str) -> str:
    return f"{text}\n{'-' * len(text)}"


def wrap(text: str, *, indent: str = "") -> str:
    return textwrap.fill(text, WIDTH, initial_indent=indent, subsequent_indent=indent)


def bullets(items: list[str]) -> str:
    return "\n".join(
        textwrap.fill(item, WIDTH, initial_indent="- ", subsequent_indent="  ") for item in items
    )


def example(lines: list[str]) -> str:
    return "\n".join(f"    {line}" for line in lines)

"""Accessible names for the inputs the admin draws without a label of their own.

Django's admin labels a field's first input only: a date-and-time field's time box, and
every input of a tabular inline row (labelled by its column header alone), have no
name a screen reader can read, which axe reports as "label" and "select-name". Each such
input gets an ``aria-label`` from its field's label ("Deadline: time", "Task").
"""

from django import forms


def labelled(formfield: forms.Field | None, *, in_row: bool = False) -> forms.Field | None:
    """``formfield`` with each of its inputs named; ``in_row``: a tabular inline's field,
    whose single input has only its column header for a label."""
    if formfield is None:
        return None
    label = str(formfield.label or "")
    widget = getattr(formfield.widget, "widget", formfield.widget)  # related-field wrapper
    if isinstance(widget, forms.SplitDateTimeWidget):
        for part, name in zip(widget.widgets, ("date", "time"), strict=True):
            part.attrs.setdefault("aria-label", f"{label}: {name}")
    elif in_row and not widget.is_hidden:
        widget.attrs.setdefault("aria-label", label)
    return formfield

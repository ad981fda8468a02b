"""What deleting datasets takes with it, counted for the admin's confirmation page.

Django's own confirmation walks every related row and lists each one: for a dataset with
a large board that is a page of millions of lines, built in one request. Here each model
that points at a dataset is counted with one query, and the page lists the datasets with
those counts, so the organiser sees what is lost before confirming.
"""

from django.db.models import QuerySet
from django.utils.text import capfirst

from .models import Dataset


def counts(datasets) -> dict[str, int]:
    """{verbose name plural: rows} of every model with a foreign key to ``datasets``
    (files, entries, the boards' bookkeeping), the datasets themselves included."""
    ids = [dataset.pk for dataset in datasets]
    found = {str(Dataset._meta.verbose_name_plural): len(ids)}
    # include_hidden: the boards' bookkeeping points here with related_name="+".
    for relation in Dataset._meta.get_fields(include_hidden=True):
        if not (relation.auto_created and (relation.one_to_many or relation.one_to_one)):
            continue
        model = relation.related_model
        number = model._default_manager.filter(**{f"{relation.field.name}__in": ids}).count()
        if number:
            name = str(model._meta.verbose_name_plural)
            found[name] = found.get(name, 0) + number
    return found


def lost(datasets: QuerySet | list) -> list:
    """The confirmation's nested list: each dataset, then everything counted with it."""
    listed = [f"{capfirst(Dataset._meta.verbose_name)}: {dataset}" for dataset in datasets]
    counted = counts(datasets)
    del counted[str(Dataset._meta.verbose_name_plural)]
    details = [f"{number:,} {name}" for name, number in sorted(counted.items())]
    return [*listed, details] if details else listed

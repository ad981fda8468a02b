"""The datasets app's answers to the challenges app's questions (challenges.signals),
connected in DatasetsConfig.ready()."""

from .models import DatasetFile


def exposure_counted(*, challenge, parts, **_) -> dict[int, dict]:
    """The files that publication releases (``parts``: (split, kind) pairs), per dataset."""
    files: dict[int, list[str]] = {}
    for datafile in DatasetFile.objects.filter(dataset__challenge=challenge).order_by(
        "dataset__position", "dataset__name", "split", "kind"
    ):
        if (datafile.split, datafile.kind) in parts:
            files.setdefault(datafile.dataset_id, []).append(datafile.filename)
    return {dataset_id: {"released_files": names} for dataset_id, names in files.items()}

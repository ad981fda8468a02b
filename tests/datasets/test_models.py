"""datasets.models: a save never writes an old generation back (GenerationField)."""

from django.db.models import F

from datasets.models import Dataset


def _stored(dataset) -> int:
    return Dataset.objects.values_list("generation", flat=True).get(pk=dataset.pk)


def test_an_insert_writes_the_generation_and_no_save_writes_it_again(challenge):
    dataset = Dataset(challenge=challenge, name="gaze", task="regression", generation=7)
    dataset.save()
    assert _stored(dataset) == 7
    Dataset.objects.filter(pk=dataset.pk).update(generation=F("generation") + 1)  # a bump
    dataset.generation = 0  # an old copy's number, or a careless assignment
    dataset.description = "edited"
    for update_fields in (None, ["description"], ["description", "generation"]):
        dataset.save(update_fields=update_fields)
        assert _stored(dataset) == 8, update_fields
    stored = Dataset.objects.get(pk=dataset.pk)
    assert (stored.description, stored.generation) == ("edited", 8)

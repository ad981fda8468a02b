"""What a change of a challenge's options means for the apps above challenges: signals
they connect in their ``AppConfig.ready()`` (challenges never imports them)."""

from django.dispatch import Signal

# Inside the transaction that saved the challenge, when its public part of the test split
# (test_public_fraction) or its number of final entries changed. kwargs: ``challenge``,
# ``public_part_changed``, ``final_entries_changed``. A receiver returns how many entries
# it queued to be scored again (services.options_changed adds them up for the message).
options_changed = Signal()

# Counting what publishing the results would make public (publication.exposure). kwargs:
# ``challenge``, ``parts`` (the (split, kind) files that publication releases) and
# ``split`` (the split whose scores it shows). A receiver returns {dataset id: fields of
# publication.DatasetExposure}: ``released_files`` (datasets), ``test_entries`` and
# ``test_scores`` (submissions).
exposure_counted = Signal()

# Inside the transaction that published or withdrew a challenge's results. kwargs:
# ``challenge``. What is shown to whom changed (late joiners' entries, for one): the
# leaderboard recomputes what it keeps for the public boards.
results_published_changed = Signal()

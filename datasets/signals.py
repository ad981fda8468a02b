from django.dispatch import Signal

# Sent with ``dataset=`` after a dataset's files were added, replaced or deleted
# (once the transaction commits). Baseline scoring and rescoring connect here.
dataset_files_changed = Signal()

# Inside the save, when a dataset's ranking loss changed. kwargs: ``dataset``. The
# submissions app recomputes the Ladder's shown scores and the entries that count for
# the final ranking.
ranking_loss_changed = Signal()

# Inside the save, when a dataset's shown losses (Dataset.losses) changed. kwargs:
# ``dataset``. The submissions app scores again the entries that lack a loss now shown.
losses_changed = Signal()

from django.dispatch import Signal

# Sent with ``dataset=`` after a dataset's files were added, replaced or deleted
# (once the transaction commits). Baseline scoring will connect here.
dataset_files_changed = Signal()

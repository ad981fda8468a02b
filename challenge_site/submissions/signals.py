"""What the apps above submissions hear of its changes: signals they connect in their
``AppConfig.ready()``.

Submissions sits below the leaderboard and the notifications (README, "Layout"), so it
never imports them; it sends these signals instead, and each receiver runs in the
sender's transaction (``Signal.send``: an exception in a receiver rolls the change back,
as the direct call it replaces did).
"""

from django.dispatch import Signal

# A participant's listed entries or their scores changed, inside the transaction and
# after the participant's lock. kwargs: ``dataset``, ``entrant`` (an entrants.Entrant, or
# None for the baseline) or ``entrants`` (a list of them: a batch of scoring runs, after
# every one's lock) and optionally ``bump`` (default True). The leaderboard rewrites
# its kept best-per-participant rows and, with ``bump``, moves the dataset's generation on
# (cached plots and counts go stale).
listing_changed = Signal()

# The dataset's boards changed as a whole (a new number of final entries or ranking
# loss), inside the transaction. kwargs: ``dataset_id``. The leaderboard moves the
# dataset's generation on.
boards_stale = Signal()

# The split's listed entries changed, so its intervals must be computed again once the
# transaction commits. kwargs: ``dataset_id``, ``split``.
intervals_stale = Signal()

# Scoring runs ended (scored, invalid or failed), inside the transaction that wrote them.
# kwargs: ``submissions``, a list (a batch's runs are written together). The
# notifications app sends the e-mails their owners asked for.
scoring_finished = Signal()

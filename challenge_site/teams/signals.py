"""What a join means for the apps above teams: signals they connect in their
``AppConfig.ready()``. Teams sit below submissions (an entry names its team), so a join
never imports the submissions app; it sends these, inside its transaction, in this order.
"""

from django.dispatch import Signal

# The joiner's user row is locked; the team's row is not yet. kwargs: ``user``,
# ``challenge``. Submissions locks the joiner's quota rows here, in the order its uploads
# take them, so a join and an upload never wait for each other in a circle.
joiner_locking = Signal()

# Before the membership is written, with the team's row locked. kwargs: ``team``, ``user``,
# ``challenge``, ``now``. A receiver refuses the join by raising services.TeamError (the
# submission limits the team and the joiner would be over together).
joining = Signal()

# The membership is written (or the team created with its first member). kwargs: ``team``,
# ``user``, ``challenge``. Submissions moves the joiner's entries to the team.
joined = Signal()

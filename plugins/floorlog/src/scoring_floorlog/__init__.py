"""A floored log score: −ln max(p(true class), 0.001), for binary and multiclass files.

The log score (nlp) is infinite as soon as a true class got probability 0; flooring the
probability at ε = 0.001 bounds each example's term by ln 1000 ≈ 6.91 nats, so that one
overconfident mistake costs a lot but not everything. Flooring makes it improper below
ε (a forecaster gains nothing by telling 0.0001 from 0.001): an example of a plug-in
loss, not a recommendation.

The scoring package calls :func:`register` (the entry point of the group
``scoring.losses``, pyproject.toml) once at start; it registers the loss for both
classification tasks with :func:`scoring.register_loss`.
"""

import numpy as np

FLOOR = 1e-3
REFERENCE = "Good, J. R. Stat. Soc. B 14 (1952), the log score; p floored at 0.001"


def binary_terms(view):
    """−ln max(p_i, ε) for a target +1, −ln max(1 − p_i, ε) for −1."""
    p_true = np.where(view.targets == 1, view.p, 1.0 - view.p)
    return -np.log(np.maximum(p_true, FLOOR))


def multiclass_terms(view):
    """−ln max(p_{i, t_i}, ε), t_i the true class's index."""
    probs = view.probs
    n, n_classes = probs.shape
    # One gather from the flat n × L values (quicker than a 2-D index of two arrays).
    flat = np.arange(0, n * n_classes, n_classes) + view.targets.astype(np.intp)
    p_true = probs.reshape(-1)[flat]
    return -np.log(np.maximum(p_true, FLOOR, out=p_true), out=p_true)


def register():
    from scoring import register_loss

    title = "Floored log score"
    for task, terms in (("classification", binary_terms), ("multiclass", multiclass_terms)):
        register_loss("floorlog", task=task, title=title, reference=REFERENCE, terms=terms)

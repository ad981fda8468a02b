"""What the demo tests read back from the generated folders."""

import numpy as np

EPUC_SHAPES = {  # name: (task, dim, train, val, test) from Table 1 of the 2004 paper
    "catalysis": ("classification", 617, 873, 300, 700),
    "gatineau": ("classification", 1092, 3000, 2176, 3000),
    "stereopsis": ("regression", 4, 192, 300, 500),
    "gaze": ("regression", 12, 150, 300, 427),
    "outaouais": ("regression", 37, 20000, 9000, 20000),
}


def load(folder, name, split, kind):
    return np.loadtxt(
        folder / name / f"{name}_{split}_{kind}.txt", ndmin=2 if kind == "inputs" else 1
    )

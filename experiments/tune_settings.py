"""The settings that ``tune_frontier.py`` and its smoothed-proxy parts (``tune_smoothed.py``) share.

Theorem 1's two-point family and the fixed reference spike, the key, the smooth max and the
optimiser's steps and starts, and the folder both write to.
"""

import pathlib

import htb_jax as htb

ROOT = pathlib.Path(__file__).resolve().parent
OUT = ROOT / "tune_frontier"
SIGMA = 0.05  # smooth max over the family, log units
STEPS = 100
SPIKES = htb.powers_of_ten(-3.0, -0.3, 0.25) + (0.5,)
STARTS = (0.02, 0.97)  # initial alpha, as a fraction of the admissible range; the better end point is kept
FIXED_SPIKE = 0.9
KEY = 0

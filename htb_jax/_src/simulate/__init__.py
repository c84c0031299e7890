"""``simulate``: every policy over seeds, a policy grid, an instance family and horizons.

Two ways to run a policy on the reward table of :mod:`htb_jax._src.reward_table`:

**Fast path** (:class:`AdaRETC`, :class:`EmpiricalETC`).  Exploration is
round-robin, so after ``L`` rounds arm ``i`` has ``n_i = floor(L/K) + [i < L
mod K]`` pulls.  Only those rewards are drawn (never ``T`` of them), streamed
in chunks of ``pull_chunk`` pulls into running block sums for every grid
point at once (one computation per distinct block layout ``(B, s)`` of an
arm: a sweep's grid points share ``B_T`` and have few distinct block sizes);
the commit phase is exact:
``R_T = sum_i Delta_i n_i + (T - L) Delta_committed``.  Exploration lengths,
block counts and block sizes are traced, so a new ``alpha``, ``q``, ``eps_bar``
(or horizon within the same block-count bucket) recompiles only where the
grid's number of distinct layouts per arm crosses 1, 2, 3, 4, 6, 8, 12, ...
or its largest block size crosses 4, 8, 16 or 32 (the static branches of
:func:`~htb_jax._src.mom.stream_block_sums`).

The exploration rewards come either pull by pull from the reward table
(``sampler="per_pull"``), or, for families whose sums have a closed-form law
(:class:`TwoPoint`, :class:`Dirac`, :class:`Gaussian`), one exact draw per
Median-of-Means block (``sampler="block_sums"``, O(K B_T) per run), or the
Median-of-Means estimate itself as one order statistic
(``sampler="order_statistic"``: a Beta level from ``B_T + 1`` exponentials,
shared by a grid's configurations, then one quantile per arm; see
:mod:`htb_jax._src.order_statistic`), so a horizon of 10^18 costs a few times
one of 10^3, not 10^15 times (docs/guides/how-it-works.md gives the recorded
costs).  ``sampler="auto"`` (the default) takes the
order statistic where it exists.  The three agree in law, not draw by draw.

**Engine** (every other policy, or any policy with ``engine=True``): the
round-by-round loop of :mod:`htb_jax._src.engine`.  AdaR-ETC through the
engine equals the fast path bit for bit.

**Paired** (``paired=True``): grid point ``i`` runs on instance ``i`` alone, for
a policy told each instance's own parameter.  The engine maps (or, where it
runs a family side by side, vmaps) the pairs instead of the product; the fast
path, whose draws every grid point shares, computes the product and keeps its
diagonal.

**Modules.**  :mod:`~htb_jax._src.simulate.program` holds ``simulate``,
``memory_plan`` and the ``prepare`` they share: it checks the arguments
(:mod:`~htb_jax._src.simulate.checks`) and hands the validated call (a
:class:`~htb_jax._src.simulate.request.Request`) to
:mod:`~htb_jax._src.simulate.fast_path` or
:mod:`~htb_jax._src.simulate.engine_path`, which plan the seed chunks and
build the program.  The fast path reads the static schedule
(:mod:`~htb_jax._src.simulate.schedule`), its block layouts
(:mod:`~htb_jax._src.simulate.layouts`) and the exact commit
(:mod:`~htb_jax._src.simulate.commit`); both paths arrange their outputs with
:mod:`~htb_jax._src.simulate.outputs`.
:mod:`~htb_jax._src.simulate.on_rewards` runs the fast path on a given reward
table.  Imports go one way: layouts, commit, outputs and request import no module
of the family, schedule imports layouts, the two paths import only those five, checks
imports schedule and fast_path, and only program and on_rewards are imported
here.
"""

from htb_jax._src.simulate.on_rewards import run_on_rewards
from htb_jax._src.simulate.program import memory_plan, simulate

__all__ = ["memory_plan", "run_on_rewards", "simulate"]

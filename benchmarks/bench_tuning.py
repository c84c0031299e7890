"""Schedule tuning: the Median-of-Means by exact selection against a sort, and the binomial quantile's
lanes joined under vmap against batched, in one run.

    python benchmarks/bench_tuning.py [--repeats 3]

Both tuning objectives recompute every seed's Median-of-Means at every step:
``smoothed_regret`` (``tune_schedule(proxy="smoothed")``) at the iterate and
its neighbours along ``alpha`` (and ``q`` where it is tuned), ``regret_proxy`` (``proxy="monte_carlo"``) with its
derivative.  htb_jax takes the ``ceil(B/2)``-th smallest block mean by the
exact selection of ``htb_jax._src.selection`` (``mom.median_of_blocks``, and
``mom.differentiable_median`` where a derivative flows through it); the
alternative is ``jnp.sort`` along the blocks and one index.  On the block means
of each objective's workload, the script times both ways of taking the median
(value, and value with gradient), checks they agree bit for bit, then times
the whole ``tune_schedule`` call of each workload:

* smoothed: three equal-gap Pareto(1.5) arms (gap 0.25, ``eps = 0.4``), ``T =
  10^4``, 256 seeds, per-pull sampler, Adam(0.1) x 100 steps, ``tune_q=True``,
  ``polish=129`` (a row of ``experiments/tune_heavy_tails.py``): 5 lengths x
  256 seeds x 3 arms of ``B_T = 230`` block means a step;
* Monte Carlo: Theorem 1's two-point family (K = 5, spike probabilities
  1e-4 .. 1 by half decades) and the spike 0.9 as reference, ``T = 10^4``, 256
  seeds, Adam(0.05) x 200 steps (the defaults): 10 instances x 256 seeds x 5
  arms of ``B_T = 230`` block means a step, with their derivative.

With the order-statistic sampler, the smoothed regret's estimates on
two-point arms are binomial quantiles (``binomial_quantile.binomial_quantile``), which
run their lanes in tiles grouped by method, each tile's loops stopping with
its own lanes, and the tail quadrature (257 nodes) only in the tiles whose
lanes need it.  ``tune_schedule`` maps over its weights ``lam`` and the
family's members; batched by ``vmap`` the usual way, those tiles' ``cond``
would compute the quadrature for every lane.  htb_jax joins the batch axes
to the lanes instead (``jax.custom_batching.custom_vmap``).  The script times
both on one step's quantiles of the third workload, checks they agree bit
for bit, and times its whole ``tune_schedule`` call:

* smoothed, order statistic: ``experiments/tune_frontier.py --trend`` at ``T
  = 10^8``: Theorem 1's two-point family with K = 2 and 64 spike
  probabilities from 1e-16 to 0.5, 64 seeds, three weights ``lam``,
  Adam(0.1) x 100 steps and ``polish=129``: 3 weights x 64 members x 64
  seeds x 3 lengths x 2 arms quantiles a step.

Times are the best of ``--repeats`` calls after a first (compiling) one.
"""

from __future__ import annotations

import argparse
import functools

import jax
import jax.numpy as jnp
import numpy as np
import optax
from bench_scale import timed

import htb_jax as htb
from htb_jax import theory
from htb_jax._src import binomial_quantile, mom, proxy, smoothing

SEEDS = 256
HORIZON = 10**4
TREND_HORIZON, TREND_SEEDS, TREND_LAMS = 10**8, 64, (0.68, 0.70, 0.72)


def pareto():
    return htb.equal_gap(htb.Pareto(loc=0.0, shape=1.5), num_arms=3, gap=0.25)


def two_point():
    family = htb.lower_bound_pair(5, 1.0, htb.powers_of_ten(-4.0, 0.0, 0.5))[1]
    return family, htb.lower_bound_pair(5, 1.0, 0.9)[1]


def trend_family():
    """Theorem 1's two-point family with K = 2 down to spike probability 1e-16, and its reference."""
    spikes = jnp.asarray(htb.powers_of_ten(-16.0, -0.3, 0.25) + (0.5,))
    return htb.lower_bound_pair(2, 1.0, spikes)[1], htb.lower_bound_pair(2, 1.0, 0.1)[1]


def smoothed_means(key) -> jax.Array:
    """The block means one step of the smoothed workload selects from: f64[B, S, 5, K]."""
    instance, k = pareto(), 3
    numbers = smoothing._common_numbers(jax.random.key_data(key), instance, k, HORIZON, SEEDS, "per_pull",
                                        -(-HORIZON // k))
    lengths = jnp.asarray([1000, 1004, 996, 1006, 994], jnp.int64)  # the iterate, alpha +- h, q +- h
    return smoothing._per_pull_block_means(numbers, lengths, k, HORIZON)


def monte_carlo_means(key) -> jax.Array:
    """The block means one step of the Monte-Carlo workload selects from: f64[B, S F K]."""
    family, _ = two_point()
    table = proxy.proxy_table(key, family, HORIZON, SEEDS, eps=1.0)
    policy = htb.AdaRETC(eps=1.0, alpha=0.8, q=0.1)
    prefix = table.prefix.reshape(-1, *table.prefix.shape[-2:])  # [S F, K, N + 1]
    means = jax.vmap(lambda p: proxy.block_means(policy, p, HORIZON)[0])(prefix)  # [S F, B, K]
    return jnp.moveaxis(means, 1, 0)  # [B, S F, K]


def median_rows(repeats: int) -> list[tuple[str, float, float, bool]]:
    key = jax.random.key(7)
    rows = []
    means = jax.jit(smoothed_means)(key)
    rank = (means.shape[0] + 1) // 2
    select = jax.jit(lambda m: mom.median_of_blocks(m, jnp.int64(m.shape[0])))
    by_sort = jax.jit(lambda m: jnp.sort(m, axis=0)[rank - 1].astype(jnp.float32))
    same = bool(np.array_equal(np.asarray(select(means)), np.asarray(by_sort(means))))
    rows.append((f"smoothed step, value: {means.shape[0]} x {int(np.prod(means.shape[1:]))} block means",
                 timed(lambda: select(means), repeats)[1], timed(lambda: by_sort(means), repeats)[1], same))
    means = jax.jit(monte_carlo_means)(key)
    rank = (means.shape[0] + 1) // 2
    weights = jnp.linspace(-1.0, 1.0, int(np.prod(means.shape[1:]))).reshape(means.shape[1:])
    ours = jax.jit(jax.value_and_grad(lambda m: jnp.sum(weights * mom.differentiable_median(m))))
    theirs = jax.jit(jax.value_and_grad(lambda m: jnp.sum(weights * jnp.sort(m, axis=0)[rank - 1])))
    (v0, g0), (v1, g1) = ours(means), theirs(means)
    same = bool(v0 == v1) and bool(np.array_equal(np.asarray(g0), np.asarray(g1)))
    rows.append((f"Monte-Carlo step, value and gradient: {means.shape[0]} x {int(np.prod(means.shape[1:]))}",
                 timed(lambda: ours(means), repeats)[1], timed(lambda: theirs(means), repeats)[1], same))
    return rows


def quantile_row(repeats: int) -> tuple[str, float, float, bool]:
    """One step's binomial quantiles of the order-statistic workload, under the ``vmap`` over
    weights and members that ``tune_schedule`` applies: lanes joined against batched."""
    family, _ = trend_family()
    u, v = smoothing._common_numbers(jax.random.key_data(jax.random.key(7)), family, 2, TREND_HORIZON,
                                     TREND_SEEDS, "order_statistic", None)  # f64[S, K] each
    # The iterate and alpha +- h (h = 10^-3) at each weight's alpha near alpha*(1) = 2/3 (q is held fixed).
    alphas = jnp.asarray([[a, a + 1e-3, a - 1e-3] for a in (0.6702, 0.6703, 0.6704)])
    lengths = jax.vmap(jax.vmap(lambda a: smoothing.exploration_of(jnp.stack([1.0, a, 0.0]), 2, TREND_HORIZON)))(alphas)
    sizes = jax.vmap(lambda n: smoothing._block_sizes(n, 2, TREND_HORIZON))(lengths).astype(jnp.float64)

    def step(quantile):
        per_member = jax.vmap(lambda p, size: quantile(u[:, None], v[:, None], size, p), in_axes=(0, None))
        return jax.jit(jax.vmap(per_member, in_axes=(None, 0)))  # [3 weights, F members, S, 3 lengths, K]

    joined = step(binomial_quantile.binomial_quantile)
    batched = step(functools.partial(binomial_quantile._binomial_quantile, tile=None))  # the usual vmap batching
    p = jnp.asarray(family.p, jnp.float64)
    same = bool(np.array_equal(np.asarray(joined(p, sizes)), np.asarray(batched(p, sizes))))
    lanes = len(TREND_LAMS) * p.shape[0] * TREND_SEEDS * lengths.shape[1] * 2
    return (f"order-statistic step, {lanes} binomial quantiles",
            timed(lambda: joined(p, sizes), repeats)[1], timed(lambda: batched(p, sizes), repeats)[1], same)


def tuning_rows(repeats: int) -> list[tuple[str, float, float, float]]:
    key = jax.random.key(7)
    eps = 0.4
    instance = pareto()
    lo, q_max = float(theory.balanced_alpha(eps)), eps / (1 + 2 * eps)
    statics = ("eps", "horizon", "num_seeds", "num_steps", "optimizer", "tune_q", "proxy", "sampler", "polish")
    tune = jax.jit(htb.tune_schedule, static_argnames=statics)
    family = jax.tree.map(lambda p: p[None], instance.broadcast())
    optimizer = optax.adam(0.1)

    def smoothed():
        return tune(key, eps=eps, family=family, reference=instance, horizon=HORIZON, num_seeds=SEEDS, lam=0.0,
                    num_steps=100, optimizer=optimizer, init_alpha=lo + (1 - lo) * 0.02, init_q=q_max / 2,
                    tune_q=True, proxy="smoothed", sampler="per_pull", polish=129)

    family_mc, reference_mc = two_point()

    def monte_carlo():
        return tune(key, eps=1.0, family=family_mc, reference=reference_mc, horizon=HORIZON, num_seeds=SEEDS,
                    num_steps=200, proxy="monte_carlo")

    rows, last = [], {}

    def kept(fn):
        last["result"] = fn()
        return last["result"]

    trend, trend_reference = trend_family()

    def order_statistic():
        return tune(key, eps=1.0, family=trend, reference=trend_reference, horizon=TREND_HORIZON,
                    num_seeds=TREND_SEEDS, lam=jnp.asarray(TREND_LAMS), sigma=0.05, num_steps=100,
                    optimizer=optimizer, init_alpha=2 / 3 + 0.02 / 3, init_q=0.0, tune_q=False,
                    proxy="smoothed", polish=129)

    for name, fn in (("smoothed, Pareto(1.5) K=3, 100 steps + polish 129", smoothed),
                     ("Monte Carlo, two-point K=5 (10 instances), 200 steps", monte_carlo),
                     ("smoothed, order statistic, T=1e8, 3 lam, 100 steps + polish", order_statistic)):
        first, best = timed(lambda fn=fn: kept(fn), repeats)
        rows.append((name, first, best, float(last["result"].alpha.reshape(-1)[0])))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    if args.repeats < 1:
        parser.exit(2, f"bench_tuning: --repeats must be a positive integer; got {args.repeats}\n")
    print(f"backend: {jax.default_backend()} ({len(jax.devices())} x {jax.devices()[0].device_kind}), "
          f"jax {jax.__version__}; T = {HORIZON}, {SEEDS} seeds\n")
    print(f"{'median of block means':<58} {'selection (s)':>13} {'sort (s)':>9} {'ratio':>6}  same")
    for name, ours, theirs, same in median_rows(args.repeats):
        print(f"{name:<58} {ours:>13.4f} {theirs:>9.4f} {theirs / ours:>5.1f}x  {'yes' if same else 'NO'}")
    name, ours, theirs, same = quantile_row(args.repeats)
    print(f"\n{'binomial quantiles under vmap':<58} {'joined (s)':>13} {'batched (s)':>11} {'ratio':>6}  same")
    print(f"{name:<58} {ours:>13.4f} {theirs:>11.4f} {theirs / ours:>5.1f}x  {'yes' if same else 'NO'}")
    print(f"\n{'tune_schedule':<58} {'first call (s)':>14} {'best (s)':>9}  tuned alpha")
    for name, first, best, alpha in tuning_rows(args.repeats):
        print(f"{name:<58} {first:>14.2f} {best:>9.2f}  {alpha:.6f}")


if __name__ == "__main__":
    main()

"""The reward-table model: the j-th pull of arm i is the same number for everyone.

Under seed ``s`` the ``j``-th pull of arm ``i`` returns ``from_bits(words)``
with word ``w`` equal to ``threefry2x32(key_w, (i, j))``, ``key_0 = fold_in(key,
s)`` and ``key_w = fold_in(key_0, w)``.  It is the same number whatever policy,
grid point, instance parameters or horizon ask for it: common random numbers
across a sweep, and an exact comparison between simulators fed the same table.

**Block sums.**  For families whose sums have a closed-form law
(``Distribution.has_block_sums``) the fast path can draw each Median-of-Means
block sum directly from one word: block ``b`` of size ``m`` of arm ``i`` uses
``threefry2x32(key_m, (i, b))`` with ``key_m = threefry2x32(fold_in(key_0,
BLOCK_STREAM), (m_hi, m_lo))``.  It is the same
number for every grid point, horizon and instance that asks for that block
size (a separate stream from the per-pull words).  Families whose block means
are an increasing map of one standard variate of a law free of the block size
(``Distribution.affine_block_means``: :class:`~htb_jax._src.distributions.Stable`)
draw block ``b`` of arm ``i`` from the words of size 0 (:func:`standard_words`),
shared by every block size.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import jax
import jax.numpy as jnp

from htb_jax._src import bits as bits_lib
from htb_jax._src import pytree
from htb_jax._src.distributions import Distribution
from htb_jax._src.instances import check_instance
from htb_jax._src.instances import num_arms as instance_num_arms
from htb_jax._src.memory import host_memory
from htb_jax._src.prng_key import as_threefry_key
from htb_jax._src.validation import check_integer, check_static, has_tracer

MAX_PULLS = 2**32  # pull counters are one uint32 word
MAX_SEEDS = 2**32  # seed indices are one uint32 word: seed s + 2^32 would repeat seed s
BLOCK_STREAM = 0xB10C5  # fold_in tag of the block-sum words (per-pull word keys use 1..num_words-1)


def seed_keys(key: jax.Array, num_seeds: int, first_seed: Any = 0) -> jax.Array:
    """Per-seed keys ``fold_in(key, s)`` for ``s = first_seed .. first_seed + num_seeds - 1``.

    A seed's numbers depend on ``key`` and ``s`` alone, never on which seeds
    share its batch.

    Args:
      key: a typed key (``jax.random.key``) or legacy ``uint32[2]`` key data (``PRNGKey``).
      num_seeds: the number of seeds, a Python int in ``[0, 2^32]``.
      first_seed: the index of the first seed, an int ``>= 0`` (default 0).

    Returns:
      key[num_seeds]: typed threefry keys.

    Raises:
      ValueError: where ``first_seed + num_seeds > 2^32`` (seed indices are uint32).
    """
    check_static("htb.seed_keys", num_seeds=num_seeds)
    check_integer("num_seeds", num_seeds, 0, maximum=MAX_SEEDS, one=True)
    check_integer("first_seed", first_seed, 0, maximum=MAX_SEEDS - int(num_seeds), one=True)
    key = as_threefry_key(key)
    seeds = jnp.asarray(first_seed, jnp.uint32) + jnp.arange(num_seeds, dtype=jnp.uint32)
    return jax.vmap(jax.random.fold_in, in_axes=(None, 0))(key, seeds)


def table_words(seed_key, num_arms: int, first_pull, num_pulls: int, num_words: int):
    """u64[K, num_pulls, num_words]: the words of pulls ``first_pull ..`` of every arm."""
    arms = jnp.arange(num_arms, dtype=jnp.uint32)[:, None]
    pulls = (jnp.asarray(first_pull, jnp.int64) + jnp.arange(num_pulls, dtype=jnp.int64)).astype(
        jnp.uint32
    )[None, :]
    keys = [seed_key] + [jax.random.fold_in(seed_key, w) for w in range(1, num_words)]
    return jnp.stack([bits_lib.threefry_words(k, arms, pulls) for k in keys], axis=-1)


def block_words(seed_key, block_size: jax.Array, max_blocks: int, num_words: int = 1) -> jax.Array:
    """The words of blocks ``0 .. max_blocks - 1`` of every arm and layout.

    Word 0 of block ``b`` of arm ``i`` at size ``m`` is ``threefry2x32(key_m, (i, b))`` (the
    module docstring); word ``w >= 1`` is the same with ``fold_in(seed_key, BLOCK_STREAM)``
    replaced by ``fold_in(fold_in(seed_key, BLOCK_STREAM), w)``, as :func:`table_words` derives
    its word keys, so that word 0 does not depend on ``num_words``.

    Args:
      seed_key: the seed's key.
      block_size: i64[K, G] block size ``s`` per arm and layout.
      max_blocks: static length of the block axis.
      num_words: static number of words per block.

    Returns:
      u64[max_blocks, K, G] for ``num_words = 1``, else u64[max_blocks, K, G, num_words].
    """
    stream = jax.random.fold_in(seed_key, BLOCK_STREAM)
    size = jnp.asarray(block_size, jnp.int64).astype(jnp.uint64)
    arms = jnp.arange(size.shape[0], dtype=jnp.uint32)[:, None]
    blocks = jnp.arange(max_blocks, dtype=jnp.uint32)[:, None, None]

    def words(key):
        data = jax.random.key_data(key)
        k0, k1 = bits_lib.threefry2x32(
            data[0], data[1], (size >> jnp.uint64(32)).astype(jnp.uint32), size.astype(jnp.uint32)
        )
        return bits_lib.join_words(*bits_lib.threefry2x32(k0, k1, jnp.broadcast_to(arms, size.shape), blocks))

    if num_words == 1:
        return words(stream)
    return jnp.stack([words(stream)] + [words(jax.random.fold_in(stream, w)) for w in range(1, num_words)], axis=-1)


def standard_words(seed_key, num_arms: int, max_blocks: int, num_words: int) -> jax.Array:
    """u64[max_blocks, K, num_words]: the words of the standard variates of blocks ``0 ..
    max_blocks - 1`` of every arm (``affine_block_means`` families, whose block means are a map of
    one standard variate of a law free of the block size): the block words of size 0, a size
    no block has, so the same for every block size, horizon and grid point."""
    size = jnp.zeros((num_arms, 1), jnp.int64)
    return block_words(seed_key, size, max_blocks, num_words)[:, :, 0]


def expand_pulls(instance: Distribution) -> Distribution:
    """Parameters f64[..., K] -> f64[..., K, 1], to broadcast against a pull axis."""
    return jax.tree.map(lambda p: p[..., None], instance.broadcast())


def reward_table(
    key: jax.Array, instance: Distribution, num_pulls: int, first_pull: int = 0
) -> jax.Array:
    """The reward table of one seed: ``table[..., i, j]`` is pull ``first_pull + j`` of arm ``i``.

    ``simulate(key, ...)`` reads exactly ``reward_table(seed_keys(key, S)[s], ...)``
    for its seed ``s`` wherever it draws per pull: round by round, and on the fast path with
    ``sampler="per_pull"`` (its default ``"auto"`` draws Gaussian, two-point, Dirac and stable
    arms' estimates from block sums or order statistics: the same law, other numbers).

    Args:
      key: the seed's key (e.g. ``seed_keys(root, S)[s]``).
      instance: batch shape ``(..., K)``.
      num_pulls: number of pulls per arm.
      first_pull: index of the first pull.

    Returns:
      f32[..., K, num_pulls].

    Raises:
      ValueError: for a table whose rewards and words (``4 + 8 num_words`` bytes a reward) exceed the
        host's physical memory, called eagerly: draw it in pieces with ``first_pull``.
    """
    check_instance(instance, function="htb.reward_table", needs=("from_bits",))
    instance_num_arms(instance)  # a trailing arm axis, refused here rather than inside the trace
    check_static("htb.reward_table", num_pulls=num_pulls)
    check_integer("num_pulls", num_pulls, 0, one=True)
    check_integer("first_pull", first_pull, 0, one=True)
    check_integer("first_pull + num_pulls", first_pull + num_pulls, 0, maximum=MAX_PULLS)
    # The rewards and their words at once: past the machine's memory the lazy result aborted the
    # interpreter when read (a failed buffer check, SIGABRT), 2^32 pulls of three arms among them.  Under
    # a trace (a jitted reduction of the table) XLA need not hold them all: no bound there.
    arms = math.prod(instance.batch_shape)
    needed, limit = arms * int(num_pulls) * (4 + 8 * type(instance).num_words), host_memory()
    if limit is not None and needed > limit and not has_tracer(key):
        raise ValueError(
            f"num_pulls={int(num_pulls)} pulls of {arms} arm(s) need about "
            f"{needed / 2**30:.1f} GiB (float32 rewards and their 64-bit words), more than this machine's "
            f"{limit / 2**30:.1f} GiB; draw the table in pieces with first_pull."
        )
    return _reward_table(as_threefry_key(key, reader="htb.reward_table"), instance, jnp.asarray(first_pull, jnp.int64),
                         int(num_pulls))  # a 0-d array as its int: a static argument


@functools.partial(pytree.class_keyed_jit, static_argnums=3)
def _reward_table(key, instance, first_pull, num_pulls):
    words = table_words(key, instance_num_arms(instance), first_pull, num_pulls, instance.num_words)
    return expand_pulls(instance).from_bits(words)


PREFIX_TILE = 16  # XLA's CPU cumulative sum pads its input to a multiple of 16 (8 is not enough)


def prefix_sums(keys: jax.Array, instance: Distribution, num_pulls: int) -> jax.Array:
    """Every seed's prefix sums of its reward table, f64[S, ..., K, num_pulls + 1].

    ``P[s, ..., i, j]`` is the float64 sum of the first ``j`` pulls of arm
    ``i`` under seed ``s`` (``P[..., 0] = 0``), summed in XLA's cumulative-sum
    order.  The table is drawn to the next multiple of :data:`PREFIX_TILE`
    pulls and its sums cut back to ``num_pulls``, so that on a CPU the draw
    stays one vectorised fusion instead of being fused into the cumulative
    sum's zero padding, where it ran 3x slower; there the sums are the same
    bit for bit as those of the table drawn to ``num_pulls`` pulls.

    Args:
      keys: key[S] the seeds' keys (``seed_keys(root, S)``).
      instance: batch shape ``(..., K)``.
      num_pulls: static number of pulls per arm.
    """
    drawn = -(-num_pulls // PREFIX_TILE) * PREFIX_TILE
    rewards = jax.vmap(lambda s: _reward_table(s, instance, jnp.int64(0), drawn))(keys)
    sums = jnp.cumsum(rewards.astype(jnp.float64), axis=-1)[..., :num_pulls]
    zero = jnp.zeros((*sums.shape[:-1], 1), jnp.float64)
    return jnp.concatenate([zero, sums], axis=-1)


@pytree.dataclass
class TableReader:
    """Reads one seed's reward table: single pulls (round by round) or chunks of pulls.

    Attributes:
      keys: key[num_words] the seed's word keys (``key_0``, ``fold_in(key_0, w)``).
      arms: the instance, parameters f64[K].
    """

    keys: jax.Array
    arms: Distribution

    @classmethod
    def create(cls, seed_key: jax.Array, arms: Distribution) -> TableReader:
        """The reader of the table of seed key ``seed_key`` for the arms ``arms``.

        Args:
          seed_key: key[] the seed's key (an entry of :func:`seed_keys`), ``key_0``.
          arms: the instance, batch shape ``(K,)``.

        Returns:
          A :class:`TableReader` with ``keys`` key[num_words] (``key_0``, then
          ``fold_in(key_0, w)`` for ``w = 1 .. num_words - 1``) and ``arms`` broadcast to one
          array per parameter, f64[K].
        """
        # A law, named as arms; its from_bits is checked where the instance enters (simulate), not again
        # here, inside the engine's trace.
        check_instance(arms, "arms", "htb.TableReader.create")
        if len(arms.batch_shape) != 1:  # a family's axis would be read as the arms by pull's index
            raise ValueError(f"arms must be one instance, batch shape (K,); got arms of batch shape "
                             f"{arms.batch_shape} (run simulate for a batch of instances).")
        keys = [seed_key] + [jax.random.fold_in(seed_key, w) for w in range(1, arms.num_words)]
        return cls(keys=jnp.stack(keys), arms=arms.broadcast())

    def pull(self, arm: jax.Array, index: jax.Array) -> jax.Array:
        """f32[]: reward of pull ``index`` (0-based) of ``arm``.

        Args:
          arm: int scalar in ``[0, K)``.
          index: int scalar in ``[0, 2^32)``.

        Raises:
          TypeError, ValueError: for a concrete ``arm`` or ``index`` that is not one integer in its
            range (a traced one is not checked: outside it, the arm is clamped and the index wraps).
        """
        check_integer("arm", arm, 0, maximum=self.arms.batch_shape[-1] - 1, one=True)
        check_integer("index", index, 0, maximum=MAX_PULLS - 1, one=True)
        if not jnp.issubdtype(jnp.result_type(arm), jnp.integer):
            arm = jnp.asarray(arm, jnp.int64)  # an integral float (1.0) indexes the parameters
        arm32 = jnp.asarray(arm, jnp.uint32)
        index32 = jnp.asarray(index, jnp.int64).astype(jnp.uint32)
        words = jnp.stack([bits_lib.threefry_words(k, arm32, index32) for k in self.keys], axis=-1)
        return jax.tree.map(lambda p: p[arm], self.arms).from_bits(words)

    def chunk(self, first_pull: jax.Array, length: int) -> jax.Array:
        """f32[K, length]: pulls ``first_pull[i] .. first_pull[i] + length - 1`` of each arm ``i``.

        Args:
          first_pull: int scalar or i64[K] per-arm first pull, with ``first_pull + length <= 2^32``.
          length: static chunk length, a Python int ``>= 0``.

        Raises:
          TypeError, ValueError: for a traced or negative ``length``, a ``first_pull`` of another
            shape, or a concrete one out of its range (a traced one is not checked: past ``2^32``
            the pull counter wraps).
        """
        k = self.arms.batch_shape[-1]
        check_static("TableReader.chunk", length=length)
        check_integer("length", length, 0, maximum=MAX_PULLS, one=True)
        if jnp.shape(first_pull) not in ((), (k,)):
            raise ValueError(f"first_pull must be one integer or one per arm, shape () or ({k},); "
                             f"got first_pull of shape {jnp.shape(first_pull)}.")
        check_integer("first_pull", first_pull, 0, maximum=MAX_PULLS - int(length))
        pulls = jnp.asarray(first_pull, jnp.int64)[..., None] + jnp.arange(length, dtype=jnp.int64)
        pulls = jnp.broadcast_to(pulls, (k, length)).astype(jnp.uint32)
        arms = jnp.arange(k, dtype=jnp.uint32)[:, None]
        words = jnp.stack([bits_lib.threefry_words(key, arms, pulls) for key in self.keys], axis=-1)
        return expand_pulls(self.arms).from_bits(words)

"""The reward-table model: per-seed, per-arm, per-pull counters."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import htb_jax as htb
from conftest import cpu_bits_only

K = 3


@pytest.fixture(scope="module")
def pareto_instance():
    return htb.equal_gap(htb.Pareto(loc=0.0, shape=1.8), num_arms=K, gap=0.2)


def test_reward_table_prefixes_offsets_and_common_random_numbers(pareto_instance):
    key = htb.seed_keys(jax.random.key(1), 3)[2]
    full = np.asarray(htb.reward_table(key, pareto_instance, 100))
    np.testing.assert_array_equal(np.asarray(htb.reward_table(key, pareto_instance, 40)), full[:, :40])
    # a 0-d array of pulls, as seed_keys and simulate take it (it failed as unhashable static data)
    np.testing.assert_array_equal(np.asarray(htb.reward_table(key, pareto_instance, jnp.array(40))), full[:, :40])
    np.testing.assert_array_equal(np.asarray(htb.reward_table(key, pareto_instance, 30, first_pull=70)), full[:, 70:])
    # The same words drive every member of a family: a Pareto arm of another shape keeps its ranks.
    family = htb.equal_gap(htb.Pareto(loc=0.0, shape=jnp.array([1.8, 3.0])), num_arms=K, gap=0.2)
    both = np.asarray(htb.reward_table(key, family, 100))
    np.testing.assert_array_equal(both[0], full)
    np.testing.assert_array_equal(np.argsort(both[1], axis=-1), np.argsort(full, axis=-1))


def test_seed_keys_depend_on_the_seed_index_alone():
    key = jax.random.key(9)
    all_keys = jax.random.key_data(htb.seed_keys(key, 10))
    np.testing.assert_array_equal(jax.random.key_data(htb.seed_keys(key, 4, first_seed=6)), all_keys[6:])
    np.testing.assert_array_equal(all_keys[3], jax.random.key_data(jax.random.fold_in(key, 3)))


def test_words_match_jax_random_bits_of_the_arm_counter(pareto_instance):
    # Word 0 of pull j of arm 0 is jax.random.bits(seed key, ...)[j]: plain threefry counters.
    key = htb.seed_keys(jax.random.key(2), 1)[0]
    table = np.asarray(htb.reward_table(key, htb.TwoPoint(jnp.zeros(K), 1.0, 0.5), 64))
    bits = np.asarray(jax.random.bits(key, (64,), jnp.uint64))
    np.testing.assert_array_equal(table[0] == 1.0, bits < np.uint64(2**63))


def test_errors(pareto_instance):
    with pytest.raises(ValueError, match="threefry2x32"):
        htb.reward_table(jax.random.key(0, impl="rbg"), pareto_instance, 10)
    with pytest.raises(ValueError, match=r"first_pull \+ num_pulls must be an integer in"):
        htb.reward_table(jax.random.key(0), pareto_instance, 10, first_pull=2**32)


def test_each_seed_draws_the_same_numbers_in_any_batch(pareto_instance):
    # threefry keys from fold_in(key, s): a seed's words under vmap, in a batch of any size, at
    # any offset, are its words alone; rbg keys would not give this (see test_errors).
    key = jax.random.key(11)
    alone = [np.asarray(htb.reward_table(jax.random.fold_in(key, s), pareto_instance, 16)) for s in range(6)]
    for first, count in ((0, 6), (2, 3), (5, 1)):
        keys = htb.seed_keys(key, count, first_seed=first)
        batched = np.asarray(jax.vmap(lambda k: htb.reward_table(k, pareto_instance, 16))(keys))
        for i in range(count):
            np.testing.assert_array_equal(batched[i], alone[first + i])


def test_rbg_keys_are_refused_with_a_clear_message(pareto_instance):
    for impl in ("rbg", "unsafe_rbg"):
        with pytest.raises(ValueError, match=f"threefry2x32; got a key of impl {impl}.*jax.random.key"):
            htb.simulate(jax.random.key(0, impl=impl), htb.AdaRETC.order_free(), pareto_instance, 100, 2)


@pytest.mark.parametrize("num_pulls", [37, 48])
def test_prefix_sums_are_the_tables_running_sums(num_pulls):
    """37 pulls are drawn as 48 and cut back; 48 need no extra pulls.  A sum over the extra pulls,
    a missing leading zero or a shifted pull index fails the comparison with each table."""
    from htb_jax._src.reward_table import prefix_sums

    family = htb.equal_gap(htb.Pareto(loc=0.0, shape=jnp.array([1.2, 3.0])), num_arms=K, gap=0.2)
    keys = htb.seed_keys(jax.random.key(4), 3)
    prefix = np.asarray(jax.jit(prefix_sums, static_argnums=2)(keys, family, num_pulls))
    assert prefix.shape == (3, 2, K, num_pulls + 1)
    for s in range(3):
        table = np.asarray(htb.reward_table(keys[s], family, num_pulls), np.float64)
        # XLA's summation order is not NumPy's: |error| <= n eps sum|x| per prefix (n = num_pulls).
        bound = num_pulls * np.finfo(np.float64).eps * np.cumsum(np.abs(table), axis=-1)
        np.testing.assert_array_equal(prefix[s, ..., 0], 0.0)
        assert np.all(np.abs(prefix[s, ..., 1:] - np.cumsum(table, axis=-1)) <= bound)
    # The same bits as the running sums of the table itself, drawn to its own length.
    cpu_bits_only("the Pareto draws fused into the running sums differ from reward_table's")
    direct = jax.jit(lambda k: jnp.cumsum(htb.reward_table(k, family, num_pulls).astype(jnp.float64), axis=-1))
    np.testing.assert_array_equal(prefix[..., 1:], np.stack([np.asarray(direct(k)) for k in keys]))


def test_a_table_past_the_machines_memory_is_refused_when_drawn_eagerly(pareto_instance, monkeypatch):
    # The lazy result of 2^32 pulls aborted the interpreter when read (SIGABRT). Against a machine of
    # 1 MiB: 10^5 pulls of the instance's arms need (4 + 8 x 1 word) bytes each.
    from htb_jax._src import reward_table as module

    monkeypatch.setattr(module, "host_memory", lambda: 2**20)
    key = htb.seed_keys(jax.random.key(0), 1)[0]
    arms = pareto_instance.batch_shape[-1]
    with pytest.raises(ValueError, match=rf"^num_pulls=100000 pulls of {arms} arm\(s\) need about 0\.0 GiB \(float32 "
                                         r"rewards and their 64-bit words\), more than this machine's 0\.0 GiB; draw the "
                                         r"table in pieces with first_pull\.$"):
        htb.reward_table(key, pareto_instance, 100_000)
    # Under a trace the bound is not applied: XLA need not hold the table to reduce it.
    assert jax.jit(lambda k: htb.reward_table(k, pareto_instance, 100_000).shape)(key) == (arms, 100_000)

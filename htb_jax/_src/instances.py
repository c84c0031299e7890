"""Bandit instances: K arms of one family, as one batched distribution.

An instance is any distribution pytree whose last batch axis indexes the arms,
``batch_shape = (..., K)``; leading axes make a *family* of instances that a
sweep simulates in one program (for example the worst-case search of
Section 5).  Arm indices are 0-based here; the paper's arm ``i`` is index
``i - 1``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from htb_jax._src.distributions import (
    Dirac,
    Distribution,
    Frechet,
    Gaussian,
    LogNormal,
    Pareto,
    Stable,
    StudentT,
    TwoPoint,
)
from htb_jax._src.distributions.base import LAW_METHODS
from htb_jax._src.protocol_checks import (
    USER_CODE_NOTE,
    check_no_list_parameters,
    check_pytree,
    note_none_parameters,
    refusing_signature,
)
from htb_jax._src.pytree import abstract_signature
from htb_jax._src.validation import (
    FLOAT32_MAX,
    check_broadcast,
    check_broadcasts_against,
    check_float32,
    check_instance_type,
    check_integer,
    check_interval,
    concrete,
    given,
)

# The families whose ``loc`` is their mean (the docstring of htb_jax._src.distributions).
_MEAN_PARAMETRISED = (Pareto, StudentT, Frechet, Gaussian, LogNormal, Stable)
MAX_ARMS = 2**32  # an arm index is one uint32 word of the reward table's counter


def num_arms(instance: Distribution) -> int:
    """``K``, the size of the last batch axis.

    Args:
      instance: a reward law (:class:`Distribution`) of batch shape ``[..., K]``.

    Returns:
      ``K``, a Python int.

    Raises:
      ValueError: where the batch shape is ``()`` (no arm axis).
    """
    check_instance(instance, function="htb.num_arms")
    shape = instance.batch_shape
    if not shape:
        raise ValueError(
            "an instance needs a trailing arm axis: its batch shape is (), "
            "give each parameter shape (..., K) with K >= 2."
        )
    return shape[-1]


_PULLS = 2  # pulls per arm of the abstract reward table that from_bits is evaluated on


def _defines(cls: type, method: str) -> bool:
    """Whether ``cls`` defines ``method`` itself or in a base below :class:`Distribution` (whose own
    raise ``NotImplementedError``); the library's families define ``abs_moment`` as ``_abs_moment``."""
    names = (method, "_abs_moment") if method == "abs_moment" else (method,)
    return any(getattr(cls, n) is not getattr(Distribution, n) for n in names)


def check_instance(
    instance: Any, name: str = "instance", function: str = "htb_jax", needs: tuple[str, ...] = ()
) -> None:
    """``TypeError`` unless ``instance`` is a reward law that ``function`` can use, before anything is traced.

    A distribution of htb_jax (an instance, not a class) whose class is
    registered as a pytree with number or array leaves, that defines every
    method of ``needs`` (and, for ``"from_bits"``, returns float32 rewards of
    the words' leading shape, evaluated abstractly: ``jax.eval_shape``, nothing
    compiled); ``"location_fields"`` in ``needs`` asks that the class's
    ``location_fields`` be fields of it (``equal_gap`` shifts them).

    Args:
      instance: the value given.
      name: parameter name used in the messages.
      function: the public function (or command) that needs the law, for the messages.
      needs: names from :data:`~htb_jax._src.distributions.base.LAW_METHODS` and ``"location_fields"``.
    """
    check_instance_type(
        name, instance, Distribution,
        "a distribution of htb_jax (Pareto, StudentT, Gaussian, TwoPoint, ...), such as htb.Pareto(loc=0.0, "
        "shape=1.5), or of a subclass of htb.Distribution of yours",
    )
    check_pytree(name, instance, function, "a reward law (an htb.Distribution)")
    cls = type(instance)
    check_no_list_parameters(name, instance, function, "a reward law", f" (or call self.check_parameters() in "
                             f"{cls.__name__}.__post_init__: it converts lists, as htb_jax's laws do)")
    words = cls.num_words
    if isinstance(words, bool) or not isinstance(words, (int, np.integer)) or words < 1:
        raise TypeError(
            f"{function} takes a reward law whose num_words (64-bit words per reward) is an int >= 1 for {name}; "
            f"got {given(name, instance)}, whose num_words is {words!r}."
        )
    for method in needs:
        if method == "location_fields":
            _check_location_fields(instance, name, function)
        elif not _defines(cls, method):
            raise TypeError(
                f"{function} needs {cls.__name__}.{LAW_METHODS[method]}; got {given(name, instance)}, whose class "
                f"does not define {method}."
            )
    if "from_bits" in needs and not _library_transform(cls):
        key = abstract_signature(instance)
        if key not in _CHECKED_LAWS:
            _check_from_bits(instance, name, function)
            if len(_CHECKED_LAWS) >= 1024:
                _CHECKED_LAWS.clear()
            _CHECKED_LAWS.add(key)


def _check_location_fields(instance: Distribution, name: str, function: str) -> None:
    cls = type(instance)
    fields = [f.name for f in dataclasses.fields(instance)] if dataclasses.is_dataclass(instance) else []
    missing = [f for f in cls.location_fields if f not in fields]
    if missing:
        raise TypeError(
            f"{function} shifts the fields that {cls.__name__}.location_fields names (the parameters that enter the "
            f"rewards additively); got {given(name, instance)}, whose location_fields {tuple(cls.location_fields)} "
            f"name {', '.join(missing)}, not among its fields ({', '.join(fields) or 'none'}): set location_fields "
            f"= (...) on the class."
        )


def _library_transform(cls: type) -> bool:
    """Whether ``cls.from_bits`` is one of the library's families' (checked by their own tests)."""
    return (getattr(cls.from_bits, "__module__", None) or "").startswith("htb_jax._src.distributions.")


# Laws whose from_bits passed the abstract check, by class, tree structure and leaf shapes and dtypes: all
# that check sees (simulate checks its instance once per chunk of seeds).
_CHECKED_LAWS: set = set()


def _check_from_bits(instance: Distribution, name: str, function: str) -> None:
    """``TypeError`` unless ``from_bits`` gives float32 rewards of the words' leading shape, on the reward
    table's own layout (parameters [..., K, 1], words uint64[..., K, pulls, num_words]), evaluated abstractly."""
    cls = type(instance)
    signature = refusing_signature(instance.from_bits, "words")
    if signature is not None:  # the call's own TypeError would name the library's lambda
        raise TypeError(f"{cls.__name__}.from_bits must take (words), the random words of the rewards; it takes "
                        f"{signature}.")
    shape = instance.batch_shape
    words = jax.ShapeDtypeStruct((*shape, _PULLS, cls.num_words), jnp.uint64)
    law = jax.tree.map(lambda x: jax.ShapeDtypeStruct(np.shape(x), jnp.result_type(x)), instance)

    def from_bits_abstractly(law, words):
        return jax.tree.map(lambda p: p[..., None], law.broadcast()).from_bits(words)

    try:
        out = jax.eval_shape(from_bits_abstractly, law, words)
    except Exception as error:
        error.add_note(f"{USER_CODE_NOTE}{cls.__name__}.from_bits, evaluated abstractly before {function} ran)")
        note_none_parameters(error, instance)
        raise
    expected = (*shape, _PULLS)
    if hasattr(out, "shape") and hasattr(out, "dtype") and (tuple(out.shape), out.dtype) == (
        expected, np.dtype(np.float32)
    ):
        _check_words_read(instance, name, function, from_bits_abstractly, law, words)
        return
    got = f"{np.dtype(out.dtype).name}{list(out.shape)}" if hasattr(out, "dtype") else type(out).__name__
    hint = (
        "rewards are float32: end with .astype(jnp.float32) where a float64 is computed"
        if hasattr(out, "shape") and tuple(out.shape) == expected
        else "one reward per word, broadcast against the parameters"
    )
    raise TypeError(
        f"{function} needs {cls.__name__}.from_bits(words) to return float32 rewards of the words' leading shape: "
        f"float32{list(expected)} from words uint64{list(words.shape)} (parameters of shape {[*shape, 1]}); got "
        f"{given(name, instance)}, whose from_bits returns {got} ({hint})."
    )


class _Words:
    """A reward's words, ``u64[..., num_words]``, whose indexing refuses an index past them as NumPy does
    (JAX clamps it); everything else is the words' own."""

    def __init__(self, words):
        self._words = words

    def __getitem__(self, index):
        np.empty(self._words.shape, bool)[index]  # IndexError past the words; a traced index raises otherwise
        return self._words[index]

    def __getattr__(self, name):
        return getattr(self._words, name)

    def __jax_array__(self):
        return self._words


def _check_words_read(instance: Distribution, name: str, function: str, from_bits, law, words) -> None:
    """``TypeError`` where ``from_bits`` reads a word past ``num_words``: JAX clamps an index out of
    range, so ``words[..., 1]`` with ``num_words = 1`` read word 0 again, and the rewards were silently
    not the law's.  Found by a second abstract evaluation whose words refuse such an index (:class:`_Words`);
    a ``from_bits`` that does not run on them (an operator on the words themselves) is not probed."""
    def from_bits_on_checked_words(law, words):
        return from_bits(law, _Words(words))

    try:
        jax.eval_shape(from_bits_on_checked_words, law, words)
    except IndexError as error:
        cls, n = type(instance), type(instance).num_words
        raise TypeError(
            f"{function} needs {cls.__name__}.from_bits to read no more than the num_words = {n} "
            f"word{'s' * (n > 1)} of a reward (words[..., :{n}]); got {given(name, instance)}, whose from_bits reads "
            f"past {'it' if n == 1 else 'them'} ({error}): declare num_words = ... on the class, as many words as it "
            f"reads (JAX would read the last one again)."
        ) from None
    except Exception:  # noqa: BLE001  (code that does not run on the wrapped words: the first check stands)
        return


def law_means(instance: Distribution) -> jax.Array:
    """``instance.mean()``, checked: f[batch_shape].

    Raises:
      TypeError: where the means do not have the law's batch shape (one mean per arm), naming
        ``mean()``, the shape expected and the one returned.
      Exception: what a user's ``mean()`` raises, with a note naming it.
    """
    cls = type(instance)
    try:
        means = instance.mean()
    except Exception as error:
        if not cls.__module__.startswith("htb_jax._src."):
            error.add_note(f"{USER_CODE_NOTE}{cls.__name__}.mean)")
            note_none_parameters(error, instance)
        raise
    shape = tuple(instance.batch_shape)
    if np.shape(means) != shape:
        raise TypeError(
            f"htb_jax needs {cls.__name__}.mean() to return one mean per arm, of the law's batch shape "
            f"{list(shape)}; got {given('instance', instance)}, whose mean() returns shape {list(np.shape(means))}."
        )
    return means


def _exact_means(cls: type, fields: dict[str, np.ndarray]) -> np.ndarray:
    """The means of a concrete instance of ``cls`` in float64 NumPy: ``loc`` for the families
    parametrised by their mean, ``low + p (high - low)`` for :class:`TwoPoint`, ``cls.mean()``
    (compiled) for any other family."""
    if cls in _MEAN_PARAMETRISED:
        return fields["loc"]
    if cls is TwoPoint:
        return fields["low"] + fields["p"] * (fields["high"] - fields["low"])
    return np.asarray(law_means(cls(**fields)), np.float64)


def check_float32_resolution(instance: Distribution) -> None:
    """``ValueError`` where float32 rewards cannot resolve a gap of the instance.

    Rewards are float32, so an arm's location is rounded to float32 before a
    sample is added: near ``|loc| = 10^8`` the float32 spacing is 8, and a gap
    of 0.1 there vanishes from the rewards while the regret still charges it.
    Refused where rounding the locations (``loc``, or ``low`` and ``high``)
    to float32 changes some positive gap ``max_j mu_j - mu_i`` by more than
    half of it (collapsing it to 0 included).  Concrete instances only.
    """
    fields = {f.name: concrete(getattr(instance, f.name)) for f in dataclasses.fields(instance)}
    if any(v is None for v in fields.values()):
        return
    shape = instance.batch_shape
    exact = {k: np.broadcast_to(np.asarray(v, np.float64), shape) for k, v in fields.items()}
    rounded = dict(exact)
    for name in type(instance).location_fields:
        rounded[name] = exact[name].astype(np.float32).astype(np.float64)
    if all(np.array_equal(rounded[k], exact[k]) for k in exact):
        return
    # In NumPy for the families of htb_jax: a refusal compiles nothing.
    means = _exact_means(type(instance), exact).reshape(-1, shape[-1])
    means32 = _exact_means(type(instance), rounded).reshape(-1, shape[-1])
    if not (np.all(np.isfinite(means)) and np.all(np.isfinite(means32))):
        return  # a mean that is not finite: refused by gaps, which names it
    rows = np.arange(means.shape[0])
    best = np.argmax(means, axis=-1)
    gap = means[rows, best][:, None] - means
    gap32 = means32[rows, best][:, None] - means32
    bad = (gap > 0) & ~(np.abs(gap32 - gap) <= 0.5 * gap)
    if not np.any(bad):
        return
    row, arm = (int(i) for i in np.argwhere(bad)[0])
    b = int(best[row])
    at = f" (instance {list(np.unravel_index(row, shape[:-1]))})" if len(shape) > 1 else ""
    spacing = float(np.spacing(np.float32(max(abs(means[row, b]), abs(means[row, arm])))))
    raise ValueError(
        f"arms {b} and {arm}{at} have means {means[row, b]:.10g} and {means[row, arm]:.10g} (gap "
        f"{gap[row, arm]:.6g}), but rewards are float32, whose spacing there is {spacing:.6g}: the "
        f"float32 rewards have gap {gap32[row, arm]:.6g}; give locations nearer 0 (gaps are "
        "differences of locations) or a larger gap."
    )


def gaps(instance: Distribution) -> jax.Array:
    """Suboptimality gaps ``Delta_i = max_j mu_j - mu_i``, f64[..., K].

    Args:
      instance: a reward law (:class:`Distribution`) of batch shape ``[..., K]`` whose
        ``mean()`` gives the arm means ``mu``.

    Returns:
      f64[..., K]: ``Delta_i >= 0``, ``0`` at the best arm(s) of each instance.

    Raises:
      ValueError: where a concrete instance's ``mean()`` is not finite, or a user's law's
        ``eps_sup()`` is negative (a law without a finite mean has no regret).
    """
    check_instance(instance, function="htb.gaps", needs=("mean",))
    num_arms(instance)  # a trailing arm axis, or a ValueError that says so (JAX's names an axis out of bounds)
    means = law_means(instance)
    _check_finite_means(instance, means)
    return jnp.max(means, axis=-1, keepdims=True) - means


def _check_finite_means(instance: Distribution, means: jax.Array) -> None:
    """``ValueError`` where a concrete instance's means are not finite, or where a law of a user's class
    that defines ``eps_sup`` says it has no finite mean (``eps_sup() < 0``); the library's families
    refuse such parameters when they are built."""
    cls = type(instance)
    values = concrete(means)
    if values is None:
        return
    what, bad = "mean() is", ~np.isfinite(values)
    if not bad.any() and _defines(cls, "eps_sup") and not cls.__module__.startswith("htb_jax._src."):
        sup = concrete(instance.eps_sup())
        if sup is not None:
            what, values = "eps_sup() is", np.broadcast_to(sup, np.shape(values))
            bad = values < 0  # no moment of order 1: E|X| = inf (at 0 it may still be finite)
    if not bad.any():
        return
    index = [int(i) for i in np.argwhere(bad)[0]]
    raise ValueError(
        f"{cls.__name__} must have a finite mean on every arm (the regret is a sum of gaps between means); got "
        f"{given('instance', instance)}, whose {what} {float(values[tuple(index)])} at index {index} of its arms "
        f"(shape {list(np.shape(bad))})" + (": E|X| is infinite there." if what == "eps_sup() is" else ".")
    )


def equal_gap(base: Distribution, num_arms: int, gap: Any) -> Distribution:
    """The equal-gap instance: arm 0 is ``base`` shifted up by ``gap``, arms 1..K-1 are ``base``.

    With ``base`` of mean 0 the means are ``(gap, 0, ..., 0)``, the paper's
    equal-gap family (Section 3) with ``sum_i Delta_i = (K - 1) gap``.

    Args:
      base: the law of one arm, batch shape ``()``.  A batch of laws (batch shape
        ``B``) makes a batch of instances, one per law: its axes lead, as ``gap``'s
        do, and are never read as the arms.
      num_arms: ``K >= 2``.
      gap: ``Delta > 0``; may be an array (its shape is prepended to the arms).

    Returns:
      The instance, batch shape ``broadcast(gap.shape, B) + (K,)``.

    Raises:
      ValueError: if ``gap.shape`` and ``B`` do not broadcast.

    Examples:
      >>> import htb_jax as htb
      >>> nu = htb.equal_gap(htb.Pareto(loc=0.0, shape=1.5), num_arms=3, gap=0.5)
      >>> nu.mean()
      Array([0.5, 0. , 0. ], dtype=float64)
    """
    check_instance(base, "base", "htb.equal_gap", ("mean", "location_fields"))
    check_integer("num_arms", num_arms, 2, maximum=MAX_ARMS, one=True)
    check_interval("gap", gap, 0.0, jnp.inf, low_closed=False, high_closed=False)
    check_float32("gap", gap, positive=True)  # else refused as the shifted law's loc, which the user never wrote
    try:
        np.broadcast_shapes(np.shape(gap), tuple(base.batch_shape))
    except ValueError:
        raise ValueError(
            f"gap and base make a batch of instances, so their shapes must broadcast; got gap of shape "
            f"{np.shape(gap)} and base of batch shape {tuple(base.batch_shape)}."
        ) from None
    for name in base.location_fields:  # else refused as the shifted law's value, which the user never wrote
        value = concrete(getattr(base, name))
        moved = None if value is None or concrete(gap) is None else np.asarray(value, np.float64) + np.asarray(gap)
        if moved is not None and np.any(np.abs(moved) > FLOAT32_MAX):
            raise ValueError(
                f"gap moves the best arm's {name} beyond the float32 range of the rewards: {name} + gap = "
                f"{float(np.max(np.abs(moved))):g} > {FLOAT32_MAX:.8g}; give a smaller gap, or a base located nearer 0."
            )
    gap = jnp.asarray(gap, jnp.float64)
    shift = jnp.zeros(int(num_arms), jnp.float64).at[0].set(1.0) * gap[..., None]
    arms = jax.tree.map(lambda p: p[..., None], base.broadcast())
    return arms.shifted(shift).broadcast()


def lower_bound_pair(
    num_arms: int, gap: Any, spike_prob: Any, arm: int = 1
) -> tuple[TwoPoint, TwoPoint]:
    """The Theorem 1 pair ``(nu^(0), nu^(i))`` of two-point instances.

    ``nu^(0)``: arm 0 is ``Dirac(gap)``, every other arm ``Dirac(0)``.
    ``nu^(i)``: the same, except arm ``arm`` is
    ``(1 - beta) Dirac(0) + beta Dirac(2 gap / beta)`` with ``beta = spike_prob``:
    mean ``2 gap`` (so arm ``arm`` is optimal and arm 0 has gap ``gap``) and
    ``E|X|^(1+eps) = (2 gap)^(1+eps) beta^-eps``.  The two instances differ in
    one arm only, on an event of probability ``beta`` per pull.

    Args:
      num_arms: ``K >= 2``.
      gap: ``Delta > 0`` (array values give a batch of pairs).
      spike_prob: ``beta`` in ``(0, 1]`` (arrays broadcast against ``gap``).
      arm: the perturbed arm, 0-based, in ``1..K-1``.

    Returns:
      ``(nu0, nu_i)``, two :class:`TwoPoint` instances of batch shape
      ``broadcast(gap, spike_prob).shape + (K,)``.
    """
    check_integer("num_arms", num_arms, 2, maximum=MAX_ARMS, one=True)
    check_integer("arm", arm, 1, maximum=num_arms - 1)
    check_interval("gap", gap, 0.0, jnp.inf, low_closed=False, high_closed=False)
    check_interval("spike_prob", spike_prob, 0.0, 1.0, low_closed=False, high_closed=True)
    check_broadcast("lower_bound_pair", gap=gap, spike_prob=spike_prob)
    g, b = concrete(gap), concrete(spike_prob)
    if g is not None and b is not None:
        g, b = np.broadcast_arrays(np.asarray(g, np.float64), np.asarray(b, np.float64))
        with np.errstate(over="ignore"):
            too_rare = 2.0 * g / b > FLOAT32_MAX
        if np.any(too_rare):
            least = 2.0 * g[too_rare].flat[0] / FLOAT32_MAX
            if least > 1.0:  # no spike probability helps: the gap itself is too large
                raise ValueError(f"gap must be at most {FLOAT32_MAX / 2:.8g} (the spike 2 gap / spike_prob, at least "
                                 f"2 gap, is a float32 reward); got gap={g[too_rare].flat[0]:.6g}.")
            raise ValueError(
                f"spike_prob must be at least 2 gap / {FLOAT32_MAX:.8g} = {least:.6g} for gap={g[too_rare].flat[0]:.6g} "
                f"(the spike 2 gap / spike_prob is a float32 reward); got spike_prob={b[too_rare].flat[0]:.6g}."
            )
    gap, beta = jnp.broadcast_arrays(
        jnp.asarray(gap, jnp.float64), jnp.asarray(spike_prob, jnp.float64)
    )
    first = jnp.zeros(int(num_arms), jnp.float64).at[0].set(1.0)
    values = gap[..., None] * first
    nu0 = Dirac(values)
    is_arm = jnp.arange(int(num_arms)) == arm
    high = jnp.where(is_arm, 2.0 * gap[..., None] / beta[..., None], values)
    p = jnp.where(is_arm, beta[..., None], 0.0)
    nu_i = TwoPoint(low=values, high=high, p=p)
    return nu0.broadcast(nu_i.batch_shape), nu_i.broadcast()


def intrinsic_scale(instance: Distribution, eps: Any) -> jax.Array:
    """``U_eps(nu) = max_i (E|X_i|^(1+eps))^(1/(1+eps))``, Section 5's intrinsic scale.

    Eq. (intrinsic_scale_unknown_parameters).  Normalised regret
    ``R_T / U_eps(nu)`` makes distribution-free rates scale free:
    ``Phi_eps(K, T) = sup_nu R_T(nu) / U_eps(nu)``.

    Args:
      instance: batch shape ``(..., K)``.
      eps: tail exponent in ``(0, 1]``; arrays broadcast against the leading
        instance axes.

    Returns:
      f64[...]: ``inf`` where some arm lacks the ``(1+eps)``-moment (a constant there, of
      derivative 0, so that a caller's finite stand-in keeps its gradients); differentiable
      in ``eps`` and the instance's parameters where the moments are.
    """
    check_instance(instance, function="htb.intrinsic_scale", needs=("abs_moment",))
    check_interval("eps", eps, 0.0, 1.0, low_closed=False, high_closed=True)
    check_broadcasts_against("eps", eps, instance.batch_shape[:-1], "the instance's batch shape without its arm axis")
    eps = jnp.asarray(eps, jnp.float64)
    return _largest_root(instance.abs_moment(eps[..., None]), eps)


@jax.jit
def _largest_root(moments: jax.Array, eps: jax.Array) -> jax.Array:
    """``max_i moments_i^(1/(1+eps))`` as one program, not four run one by one: a maximum, a
    sum, a quotient and a power, where no fused multiply-add can form (the same bits).  An infinite
    maximum is not raised to the power: its derivative (``inf ** (1/p) log(inf)``) made every gradient
    through it NaN, also where a caller then takes a finite stand-in."""
    largest = jnp.max(moments, axis=-1)
    finite = jnp.isfinite(largest)
    return jnp.where(finite, jnp.where(finite, largest, 1.0) ** (1.0 / (1.0 + eps)), jnp.inf)

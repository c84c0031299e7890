"""``python -m htb_jax`` runs the ``htb-jax`` command line."""

from htb_jax._src.cli import run

run()

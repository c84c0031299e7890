"""Private implementation of htb_jax; the public names are re-exported by `htb_jax`."""

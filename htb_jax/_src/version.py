"""htb_jax's version: the package's ``__version__`` and pyproject.toml's (read from here)."""

__version__ = "0.1.0"

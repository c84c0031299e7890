"""``python -m htb_jax`` runs the ``htb-jax`` command line."""

import sys

from htb_jax._src.cli import main

sys.exit(main())

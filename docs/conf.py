"""Sphinx configuration of the htb_jax documentation site.

Build it with ``python -m sphinx -W --keep-going -b html docs docs/_build/html``; the build
reads nothing from the network (no intersphinx) and executes no notebook.
"""

from __future__ import annotations

import pathlib
import shutil
import sys

import htb_jax

DOCS = pathlib.Path(__file__).parent
sys.path.insert(0, str(DOCS / "_ext"))

project = "htb_jax"
author = "htb_jax authors"
copyright = "htb_jax authors"
release = htb_jax.__version__
version = release

extensions = [
    "myst_nb",  # MyST Markdown pages and notebooks (it loads myst_parser itself)
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
    "cli_reference",  # docs/_ext/cli_reference.py: the command line, generated from its parser
    "shape_stars",  # docs/_ext/shape_stars.py: the docstrings' array shapes (f64[*G, *I]) as code
    "first_sentence",  # docs/_ext/first_sentence.py: autosummary's summaries cut outside literals
    "included_links",  # docs/_ext/included_links.py: links inside files included from outside docs/
]

exclude_patterns = ["_build", "**.ipynb_checkpoints"]
templates_path = ["api/_templates"]

# The API reference: one page per public name, generated at build time from the grouped
# pages in api/ (docs/api/_autosummary is not committed).  Generated pages of names that left
# __all__ would otherwise linger there as pages outside every toctree, so they start afresh.
shutil.rmtree(DOCS / "api" / "_autosummary", ignore_errors=True)
autosummary_generate = True
autodoc_typehints = "description"
autodoc_member_order = "bysource"
autodoc_default_options = {"members": True, "show-inheritance": True}
napoleon_google_docstring = True
napoleon_numpy_docstring = False
napoleon_use_rtype = False
# An "Attributes:" section as fields of the class, not as attribute entries that the
# members autodoc documents would duplicate.
napoleon_use_ivar = True

myst_enable_extensions = ["colon_fence", "dollarmath"]
myst_heading_anchors = 3
nb_execution_mode = "off"  # notebooks show the outputs stored in them
# A notebook's Markdown output (its tables) read as GitHub-flavoured Markdown, which has tables.
nb_render_markdown_format = "gfm"

# sphinx_book_theme: the theme of the optax and blackjax sites, with a clean left-hand
# navigation and notebook pages that read like the other pages.
html_theme = "sphinx_book_theme"
html_title = f"htb_jax {release}"
# The left navigation stops at the reference's group pages (each name's page is linked from
# its group's table): every page renders the whole navigation tree, and with the 115 name
# pages in it the build took about 50 s instead of 30 s on 2 cores.
html_theme_options = {
    "show_toc_level": 2,
    "navigation_with_keys": False,
    "collapse_navbar": True,
    "max_navbar_depth": 2,
}

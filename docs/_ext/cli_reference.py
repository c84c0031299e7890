"""The ``cli-reference`` directive: the ``htb-jax`` command line, rendered from its parser.

Each subcommand gets a section (id ``htb-jax-<command>``) with its usage, description, every
option of every argument group with its expanded help, and its epilog, all read from the
parser that ``htb-jax`` itself builds, so a new flag appears here without editing the page.
"""

from __future__ import annotations

import argparse

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

from htb_jax._src.cli.bench_command import add_bench_parser
from htb_jax._src.cli.frontier_command import add_frontier_parser
from htb_jax._src.cli.sweep_command import add_sweep_parser

WIDTH = 88  # the usage lines' width: fixed, so the page does not depend on the terminal


def subcommand_parsers() -> dict[str, argparse.ArgumentParser]:
    """The parser of each ``htb-jax`` subcommand, by name, as ``htb-jax`` adds them."""
    sub = argparse.ArgumentParser(prog="htb-jax").add_subparsers()
    add_frontier_parser(sub)
    add_sweep_parser(sub)
    add_bench_parser(sub)
    return dict(sub.choices)


def _formatter(parser: argparse.ArgumentParser) -> argparse.HelpFormatter:
    return parser.formatter_class(prog=parser.prog, width=WIDTH)


def _usage(parser: argparse.ArgumentParser) -> str:
    formatter = _formatter(parser)
    formatter.add_usage(parser.usage, parser._actions, parser._mutually_exclusive_groups)
    return formatter.format_help().strip()


def _help(formatter: argparse.HelpFormatter, action: argparse.Action) -> str:
    """The help as ``--help`` prints it (``%(default)s`` expanded), with the default where it says none."""
    text = formatter._expand_help(action) if action.help else ""
    if "default" not in text and action.default not in (None, False, argparse.SUPPRESS):
        text = f"{text} (default {action.default})".strip()
    return text


def _paragraphs(text: str) -> list[nodes.paragraph]:
    return [nodes.paragraph(text=" ".join(block.split())) for block in text.split("\n\n") if block.strip()]


def _options(parser: argparse.ArgumentParser) -> list[nodes.Node]:
    formatter = _formatter(parser)
    out: list[nodes.Node] = []
    for group in parser._action_groups:
        actions = [a for a in group._group_actions if a.option_strings and a.help != argparse.SUPPRESS]
        if not actions:
            continue
        out.append(nodes.rubric(text=group.title))
        items = nodes.definition_list()
        for action in actions:
            term = nodes.term()
            term += nodes.literal(text=formatter._format_action_invocation(action))
            items += nodes.definition_list_item("", term, nodes.definition("", *_paragraphs(_help(formatter, action))))
        out.append(items)
    return out


class CliReference(SphinxDirective):
    """``{cli-reference}``: one section per subcommand of ``htb-jax``."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        sections = []
        for name, parser in subcommand_parsers().items():
            section = nodes.section(ids=[f"htb-jax-{name}"], names=[f"htb-jax {name}"])
            section += nodes.title(text=f"htb-jax {name}")
            section += nodes.literal_block(text=_usage(parser), language="text")
            section += _paragraphs(parser.description or "")
            section += _options(parser)
            if parser.epilog:
                section += nodes.literal_block(text=parser.epilog.strip(), language="text")
            self.state.document.note_implicit_target(section, section)
            sections.append(section)
        return sections


def setup(app):
    app.add_directive("cli-reference", CliReference)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

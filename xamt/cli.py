"""The ``xamt`` command line.

Each subcommand is a :class:`~xamt.command.Command` (name, help, ``configure(parser)``,
``run(args) -> int``) returned by a provider function named in :data:`COMMAND_PROVIDERS` as
``"module:function"``.
Adding a subcommand is writing such a provider (next to the code it drives) and adding one line
there; providers are imported only when the command line is built. Every command gets ``--out``
(the output folder; the store is ``<out>/xamt.db``) and ``-v``.
"""
from __future__ import annotations

import argparse
import sys
from typing import Sequence

from xamt.command import Command
from xamt.errors import XamtError
from xamt.libraries.base import resolve_ref
from xamt.log import configure

__all__ = ["Command", "COMMAND_PROVIDERS", "DEFAULT_OUT", "build_parser", "main"]

DEFAULT_OUT = "xamt-out"

#: ``"module:function"`` providers, each returning one :class:`Command`, in help order
COMMAND_PROVIDERS: tuple[str, ...] = (
    "xamt.catalog.cli:cli_command",
    "xamt.matching.cli:cli_command",
    "xamt.groups.cli:cli_command",
    "xamt.fuzz.cli:fuzz_command",
    "xamt.fuzz.cli:repro_command",
    "xamt.report.cli:report_command",
    "xamt.report.cli:findings_command",
)


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", default=DEFAULT_OUT, metavar="DIR",
                        help=f"output folder; the store is DIR/xamt.db (default: {DEFAULT_OUT}/)")
    parser.add_argument("-v", "--verbose", action="count", default=0,
                        help="more log output (-v info, -vv debug)")


def build_parser(providers: Sequence[str] = COMMAND_PROVIDERS) -> argparse.ArgumentParser:
    """The argument parser with every provider's subcommand."""
    parser = argparse.ArgumentParser(
        prog="xamt", description="Differential fuzzing of deep-learning and array libraries.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for ref in providers:
        command: Command = resolve_ref(ref)()
        cmd_parser = sub.add_parser(command.name, help=command.help, description=command.help)
        _common(cmd_parser)
        command.configure(cmd_parser)
        cmd_parser.set_defaults(_run=command.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``xamt`` console script; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    configure(args.verbose)
    try:
        return int(args._run(args))
    except XamtError as exc:
        print(f"xamt {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"xamt {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # `xamt match --json | head`: the reader left; not an error. Point stdout at devnull so
        # the interpreter's final flush does not complain again.
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())

"""``onnx-lint server``: the language server over stdio (docs/editors.md)."""

from __future__ import annotations

import argparse
import logging
import sys


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="onnx-lint server",
                                     description="Run the onnx-lint language server (LSP over stdio).")
    parser.add_argument("--stdio", action="store_true", help="talk LSP over stdin/stdout (the default; "
                        "accepted because many clients pass it)")
    parser.add_argument("--log-level", choices=("error", "warning", "info", "debug"), default="warning",
                        help="level of pygls' own log on stderr (the server's messages go to the client)")
    return parser


def main(argv: list[str]) -> int:
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:
        return 0 if exc.code == 0 else 2
    logging.basicConfig(level=args.log_level.upper(), stream=sys.stderr,
                        format="onnx-lint server: %(levelname)s %(name)s: %(message)s")
    from onnx_lint.server.server import create_server

    server = create_server()
    try:
        server.start_io()
    finally:
        server.session.shutdown()
    return 0

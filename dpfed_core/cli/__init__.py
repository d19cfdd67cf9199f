"""The command line, ``python -m dpfed_core …``: it depends on the engine, never the reverse."""
from dpfed_core.cli.main import build_parser, main  # noqa: F401

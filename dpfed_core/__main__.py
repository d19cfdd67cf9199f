"""``python -m dpfed_core`` — see :mod:`dpfed_core.cli`."""
import sys

from .cli import main

sys.exit(main())

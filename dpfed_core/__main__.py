"""``python -m dpfed_core`` — see :mod:`dpfed_core.cli`."""
import sys

from dpfed_core.cli.main import main

sys.exit(main())

"""`python -m openai4s`: the command-line entry point."""

import sys

from openai4s.cli import main

sys.exit(main())

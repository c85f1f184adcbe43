"""Run the command line: ``python -m generator``."""

from generator.cli import run

run()

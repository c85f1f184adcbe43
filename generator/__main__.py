"""Run the command line: ``python -m generator``."""

import atexit
import os
import sys

from generator.cli import main

status = main()
try:
    for stream in (sys.stdout, sys.stderr):
        if stream is not None:  # None: started with the descriptor closed, and nothing was written
            stream.flush()
except OSError:  # output that cannot be written: reported as the interpreter reports it at exit
    raise SystemExit(status) from None
# Leave without the interpreter's teardown, which frees every object a build left, one by one: some 20 ms
# at the end of a catalog build, where the system takes the whole process back at once. What was
# registered to run at exit (multiprocessing's, logging's) runs first.
atexit._run_exitfuncs()
os._exit(status)

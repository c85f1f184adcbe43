"""Start the benchmark's commands from a small process, so that their peak memory is their own.

A process started from another records, as its peak resident set, at least the resident set of the
process it was started from, at the moment it execs: the kernel keeps the larger of the two. The
benchmark holds hundreds of loaded cards by the time it runs Hugo and the comparison builds, so a
command it started itself would report the benchmark's size, not its own (187 MiB for a build that
peaks at 72 MiB). ``bench/run.py`` starts this script once, while it is small, and has it start
each command: one JSON object a line in (the command, its folder, environment and output files),
one a line out (the exit status, wall time, CPU time and peak resident set ``wait4`` reports).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path


def main() -> None:
    for line in sys.stdin:
        job = json.loads(line)
        with Path(job["stdout"]).open("wb") as out, Path(job["stderr"]).open("wb") as err:
            started = time.perf_counter()
            process = subprocess.Popen(
                job["cmd"], cwd=job["cwd"], stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=job["env"]
            )
            _, status, usage = os.wait4(process.pid, 0)
            wall = time.perf_counter() - started
        done = {
            "status": os.waitstatus_to_exitcode(status),
            "wall": wall,
            "cpu": usage.ru_utime + usage.ru_stime,
            "peak_kib": usage.ru_maxrss,
        }
        print(json.dumps(done), flush=True)


if __name__ == "__main__":
    main()

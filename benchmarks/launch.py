"""Run one command as a process of its own; print its wall seconds, CPU seconds and peak memory.

    python -I -S benchmarks/launch.py COMMAND [ARG ...]

Why a launcher: a process's peak resident size (`ru_maxrss`) starts at the high-water mark of the
process it was forked from, because exec keeps the forked copy's mark (with vfork, which Python's
subprocess and posix_spawn use, the parent's own). Measured straight from the benchmark's harness,
no figure could read below the harness's size. This launcher is a bare interpreter (no site, no
imports but os, sys and time), so the command it starts begins from that small size instead, and
the `wait4` of that one child gives the command's own figures: its CPU and peak include the workers
it waited for, and nothing of the harness.

The command reads this process's stdin; its stdout and stderr go to the null device. The one line
this prints: `wall=S cpu=S peak_kib=N exit=N`, or `error=...` when the command cannot start.
"""

import os
import sys
import time


def main() -> None:
    command = sys.argv[1:]
    report = os.dup(1)  # not inheritable: the command never sees where the report goes
    quiet = os.open(os.devnull, os.O_WRONLY)
    os.dup2(quiet, 1)
    os.dup2(quiet, 2)
    start = time.perf_counter()
    try:
        pid = os.posix_spawnp(command[0], command, os.environ)
    except OSError as error:
        os.write(report, f"error={command[0]}: {error.strerror}\n".encode())
        return
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - start
    cpu = usage.ru_utime + usage.ru_stime
    line = f"wall={wall:.6f} cpu={cpu:.6f} peak_kib={usage.ru_maxrss} exit={os.waitstatus_to_exitcode(status)}\n"
    os.write(report, line.encode())


if __name__ == "__main__":
    main()

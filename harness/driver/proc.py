"""Running other programs (make, the bench binaries, gnuplot, hwloc) and the CPUs this
process may use."""

import os
import subprocess
import threading


def usable_cpus():
    """CPUs this process may run on (honours affinity masks and cpusets)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def run_capture(cmd, timeout=60, env=None, cwd=None):
    """(returncode, stdout, stderr) of a command; (None, '', reason) if it cannot start."""
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env,
                           cwd=cwd, errors="replace")
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, "", str(e)
    return p.returncode, p.stdout, p.stderr


def last_line(text, default="no output"):
    """The last non-empty line of text (for one-line error messages)."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else default


def run_with_timeout(cmd, out, env, cwd, timeout):
    """Run cmd with stdout and stderr to the file out; kill it after timeout seconds.
    Returns (returncode, timed_out).  (A timer thread instead of Popen.wait(timeout),
    which polls with sleeps.)"""
    proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=cwd)
    fired = threading.Event()

    def kill():
        fired.set()
        proc.kill()

    timer = threading.Timer(timeout, kill) if timeout else None
    if timer:
        timer.start()
    try:
        return proc.wait(), fired.is_set()
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    finally:
        if timer:
            timer.cancel()

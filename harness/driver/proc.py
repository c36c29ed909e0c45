"""Running other programs (make, the bench binaries, gnuplot, hwloc), ending them when
run.py is told to stop (SIGINT, SIGTERM, SIGHUP), several at once (map_jobs), and the
CPUs this process may use."""

import concurrent.futures
import contextlib
import os
import signal
import subprocess
import threading

# The signals that stop run.py: each raises Interrupted in the main thread, and the
# unwinding kills whatever child it was waiting for.  (Python's default for SIGTERM and
# SIGHUP is to die at once, leaving a bench running with nobody to time it out.)
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Interrupted(KeyboardInterrupt):
    """run.py was told to stop by signal `signum`.  A KeyboardInterrupt, so that one
    handler serves Ctrl-C and the others; exit_status is 128 + the signal, as a shell
    reports a command the signal ended (130 for SIGINT)."""

    def __init__(self, signum):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum
        self.exit_status = 128 + signum

    def describe(self):
        """'interrupted', or 'interrupted by SIGTERM' for another signal than Ctrl-C's."""
        return "interrupted" if self.signum == signal.SIGINT else f"interrupted by {self}"

    @classmethod
    def of(cls, exc):
        """exc as an Interrupted: Python's own KeyboardInterrupt is SIGINT's."""
        return exc if isinstance(exc, cls) else cls(signal.SIGINT)


_deferred = None       # while signals_deferred(): the stop signals that arrived


def _on_stop_signal(signum, frame):
    del frame
    if _deferred is not None:
        _deferred.append(signum)
        return
    raise Interrupted(signum)


@contextlib.contextmanager
def stop_signals_interrupt():
    """Within it, SIGINT, SIGTERM and SIGHUP raise Interrupted (main thread only); a
    signal the parent left ignored (nohup, a shell's background job) stays ignored.  The
    handlers before it are put back at the end."""
    old = {}
    try:
        for signum in STOP_SIGNALS:
            if signal.getsignal(signum) is not signal.SIG_IGN:
                old[signum] = signal.signal(signum, _on_stop_signal)
        yield
    finally:
        for signum, handler in old.items():
            signal.signal(signum, handler)


@contextlib.contextmanager
def signals_deferred():
    """Hold the stop signals back for a few steps that must not be cut in two (starting a
    child and keeping its handle, killing and reaping it); the first that arrived is
    raised at the end, unless an interrupt is already on its way out."""
    global _deferred
    outer, _deferred = _deferred, []
    try:
        yield
    except BaseException as e:
        arrived, _deferred = _deferred, outer
        if arrived and outer is None and not isinstance(e, KeyboardInterrupt):
            raise Interrupted(arrived[0]) from e
        if outer is not None:
            outer.extend(arrived)
        raise
    arrived, _deferred = _deferred, outer
    if arrived:
        if outer is not None:
            outer.extend(arrived)
        else:
            raise Interrupted(arrived[0])


def map_jobs(func, items, jobs=1):
    """func(item) for each item, yielded in the items' order: one after the other in this
    thread, or with jobs > 1 that many at a time in threads.  A stop signal (which only
    the main thread gets) or an error lets the calls that are running end and starts no
    other."""
    if jobs <= 1:
        for item in items:
            yield func(item)
        return
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        futures = [pool.submit(func, item) for item in items]
        try:
            for future in futures:
                yield future.result()
        except BaseException:
            pool.shutdown(cancel_futures=True)
            raise


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


def signal_death(returncode):
    """'killed by signal 9 (SIGKILL)' for Popen's negative returncode of a process that a
    signal ended; None for an exit."""
    if returncode is None or returncode >= 0:
        return None
    try:
        name = f" ({signal.Signals(-returncode).name})"
    except ValueError:
        name = ""
    return f"killed by signal {-returncode}{name}"


def last_line(text, default="no output"):
    """The last non-empty line of text (for one-line error messages)."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else default


def run_with_timeout(cmd, out, env, cwd, timeout):
    """Run cmd with stdout and stderr to the file out; kill it after timeout seconds, or
    as soon as an exception (Interrupted) ends the wait: no child outlives the call.
    Returns (returncode, timed_out).  (A timer thread instead of Popen.wait(timeout),
    which polls with sleeps.)"""
    proc, timer = None, None
    fired = threading.Event()

    def kill():
        fired.set()
        proc.kill()

    try:
        with signals_deferred():        # a stop signal now is raised once proc is known
            proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env,
                                    cwd=cwd)
        if timeout:
            timer = threading.Timer(timeout, kill)
            timer.start()
        return proc.wait(), fired.is_set()
    except BaseException:
        if proc is not None:
            with signals_deferred():    # a second signal must not cut the kill short
                proc.kill()
                proc.wait()
        raise
    finally:
        if timer:
            timer.cancel()

"""Steps taken in turn with other runs (bench/lockstep.py).

Runs that share a GPU and a host, each running its steps only when given
the turn, see the same drift of the host's speed (its clocks, other
tenants) step by step, so step N of one can be compared with step N of
the other. The turn is a byte on a pipe: read one from fd R before a step,
write one to fd W after it. The last step's turn is not written: it passes
when this run exits and its end of the pipe closes, so the next run's last
step is not taken beside this one's checksum and teardown. A pipe that
ends (the run before this one exited) stops the waiting, and a reader
that is gone (the next run exited) stops the writing: a run never hangs
on another's failure.

No torch here, so the tests without a GPU use the same code.
"""
import argparse
import fcntl
import os


def parse_fds(text):
    """'R,W' -> (R, W), for argparse's type=: two descriptors this process
    has open, R for reading and W for writing (a run that would fail at
    its first step's turn is refused before it builds its model)."""
    try:
        r, w = (int(x) for x in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(
            "%r is not two file descriptors R,W (as in 3,4)" % text) from None
    for fd, use, modes in ((r, "reading", (os.O_RDONLY, os.O_RDWR)),
                           (w, "writing", (os.O_WRONLY, os.O_RDWR))):
        try:
            flags = fcntl.fcntl(fd, fcntl.F_GETFL) if fd >= 0 else None
        except OSError:
            flags = None
        if flags is None:
            raise argparse.ArgumentTypeError("file descriptor %d (for %s) is not open" % (fd, use))
        if flags & os.O_ACCMODE not in modes:
            raise argparse.ArgumentTypeError("file descriptor %d is not open for %s" % (fd, use))
    return r, w


class Turns:
    """steps(n) yields the steps, each when this run has the turn; with
    fds None, at once."""

    def __init__(self, fds=None):
        self.r, self.w = fds if fds else (None, None)

    def steps(self, n):
        for step in range(n):
            self._wait()
            yield step
            if step + 1 < n:
                self._done()

    def _wait(self):
        if self.r is not None and not os.read(self.r, 1):
            self.r = None

    def _done(self):
        if self.w is None:
            return
        try:
            os.write(self.w, b"t")
        except BrokenPipeError:
            self.w = None

#!/usr/bin/env python3
"""on_tty.py OUTFILE TTYFILE COMMAND...: runs COMMAND with its stdin and
stderr on a pseudo-terminal and its stdout in OUTFILE, copies everything
written to the terminal into TTYFILE as it comes (a test may watch the
file while COMMAND runs), and exits with COMMAND's status.  The
integration tests use it to see what a person at a terminal sees."""
import os
import pty
import subprocess
import sys


def main():
    out_path, tty_path, argv = sys.argv[1], sys.argv[2], sys.argv[3:]
    master, slave = pty.openpty()
    with open(out_path, "wb") as out:
        child = subprocess.Popen(argv, stdin=slave, stdout=out, stderr=slave, close_fds=True)
    os.close(slave)
    with open(tty_path, "wb") as f:
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: every process holding the terminal has gone
                break
            if not chunk:
                break
            f.write(chunk)
            f.flush()
    os.close(master)
    rc = child.wait()
    sys.exit(rc if rc >= 0 else 128 - rc)


if __name__ == "__main__":
    main()

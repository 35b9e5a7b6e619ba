#!/usr/bin/env python3
"""killat.py POINT FEED -- COMMAND...: runs COMMAND (its stdout discarded)
and SIGKILLs it at POINT, a moment observed from outside through /proc,
never guessed by time (it polls every millisecond, up to 300 s):

  start      as soon as it runs (before it connects)
  open       once FEED is open (the run holds the job's lock by then)
  read:F     once its read position in FEED has passed fraction F of it
  write:N    once it has written N bytes after reading all of FEED
             (/proc/PID/io wchar: write(2) to files, so a SQLite database
             and its journal, not send(2) to a server)
  wait:N     once it has waited N times after reading all of FEED
             (voluntary context switches in /proc/PID/status: each round
             trip to a server is one or more)
  never      not at all: it runs to its end

Prints "killed at POINT (what was seen)" or "ran to the end: status S",
and with `never` "written N" and "waited N" too: the counts after the FEED
was read, from which the caller picks write and wait points.  Exits 0, or
1 when the point was not reached within 300 s or before the command ended.
"""
import os
import signal
import subprocess
import sys
import time


def feed_fd(pid, feed):
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                if os.readlink(f"/proc/{pid}/fd/{fd}") == feed:
                    return fd
            except OSError:
                pass
    except OSError:
        pass
    return None


def field(path, name):
    """The number after "name:" in a /proc file, or None (gone, closed)."""
    try:
        with open(path) as f:
            for line in f:
                if line.startswith(name + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def pos(pid, fd):
    return field(f"/proc/{pid}/fdinfo/{fd}", "pos")


def wchar(pid):
    return field(f"/proc/{pid}/io", "wchar")


def waits(pid):
    return field(f"/proc/{pid}/status", "voluntary_ctxt_switches")


def main():
    if len(sys.argv) < 5 or sys.argv[3] != "--":
        sys.exit(__doc__)
    point, feed, cmd = sys.argv[1], os.path.realpath(sys.argv[2]), sys.argv[4:]
    size = os.path.getsize(feed)
    kind, _, arg = point.partition(":")
    # Its stdout (the summary) is not needed: this one reports.
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 300
    fd = None
    read_end_w = None   # wchar when the feed was read to its end
    read_end_v = None   # voluntary context switches then
    last_w = last_v = 0
    seen = ""
    while p.poll() is None and time.monotonic() < deadline:
        if kind == "start":
            seen = "pid %d" % p.pid
            break
        if fd is None:
            fd = feed_fd(p.pid, feed)
        if fd is not None and read_end_w is None:
            at = pos(p.pid, fd)
            # Closed (None) after it was open, or at its end: read.
            if at is None or at >= size:
                read_end_w = wchar(p.pid)
                read_end_v = waits(p.pid)
            if kind == "open":
                seen = "feed open at %s of %d bytes" % (at, size)
                break
            if kind == "read" and at is not None and at >= float(arg) * size:
                seen = "read %d of %d bytes" % (at, size)
                break
        if read_end_w is not None:
            w, v = wchar(p.pid), waits(p.pid)
            if w is not None and v is not None:
                last_w, last_v = w - read_end_w, v - read_end_v
                if kind == "write" and last_w >= int(arg):
                    seen = "written %d bytes after the feed" % last_w
                    break
                if kind == "wait" and last_v >= int(arg):
                    seen = "waited %d times after the feed" % last_v
                    break
        time.sleep(0.001)
    else:
        rc = p.wait() if p.poll() is not None else None
        if kind == "never" and rc is not None:
            print("ran to the end: status %d" % rc)
            print("written %d" % last_w)
            print("waited %d" % last_v)
            sys.exit(0)
        if rc is None:
            p.kill()
            p.wait()
        print("point %s not reached (status %s, written %d, waited %d)" % (point, rc, last_w, last_v))
        sys.exit(1)
    os.kill(p.pid, signal.SIGKILL)
    rc = p.wait()
    print("killed at %s (%s; status %d)" % (point, seen, rc))


main()

#!/usr/bin/env python3
"""Seeded generator for the late-rows differential test (tests/integration/late_diff.sh).

Makes random change streams per key (updates, no-op repeats, identical
duplicates, deletes through a flag column, revivals), gives every row an
arrival time at most LOOKBACK after its lmd, and splits the arrivals into
runs.  Writes:

  DIR/run1.csv .. DIR/runN.csv  what the source holds at each run: every row
                                arrived so far, in arrival order (a change
                                log the source keeps, as a table would)
  DIR/all.csv                   the whole stream, for one reference run
  DIR/runs                      N

A row that arrives for run k has lmd > checkpoint(k-1) - lookback, as the
rows of a real source arrive within the lookback: it arrived after run
k-1's clock, less than LOOKBACK after its lmd, and checkpoint(k-1) is at
most that clock.  Each case is a few keys named c<case>k<n>, so one job run
holds many cases; the key says which case a difference belongs to.

usage: late_gen.py SEED CASES DIR [LOOKBACK_SECONDS]
"""
import csv
import datetime
import os
import random
import sys

EPOCH = datetime.datetime(2024, 1, 1)
VALUES = ["a", "b", "c"]     # few values: repeats and merges with neighbours are common
TYPE1 = ["p", "q"]


def ts(sec):
    return (EPOCH + datetime.timedelta(seconds=sec)).strftime("%Y-%m-%d %H:%M:%S")


def stream(rnd, key):
    """One key's rows as (lmd_seconds, row)."""
    rows = []
    t = rnd.randrange(0, 4 * 3600) // 60 * 60
    live = False
    cur = None
    t1 = rnd.choice(TYPE1)
    for _ in range(rnd.randint(1, 9)):
        t += rnd.randint(1, 90) * 60
        r = rnd.random()
        if live and r < 0.18:
            # delete: the flag column says so; the tracked value varies (a
            # tombstone keeps it), the type 1 value is the key's last, as
            # in a change feed's delete record (a run that sees only the
            # delete knows no other)
            row = [key, rnd.choice(VALUES), t1, "D", ts(t)]
            live = False
        elif live and r < 0.40:
            t1 = rnd.choice(TYPE1)
            row = [key, cur, t1, "", ts(t)]   # no-op repeat (type 1 may change)
        else:
            cur, t1 = rnd.choice(VALUES), rnd.choice(TYPE1)
            row = [key, cur, t1, "", ts(t)]   # update, or a revival after a delete
            live = True
        rows.append((t, row))
        if rnd.random() < 0.08:
            rows.append((t, list(row)))                    # an identical duplicate
    return rows


def main():
    seed, cases, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    lookback = int(sys.argv[4]) if len(sys.argv) > 4 else 7200
    rnd = random.Random(seed)
    allrows = []
    for c in range(cases):
        for k in range(rnd.randint(1, 3)):
            for t, row in stream(rnd, "c%dk%d" % (c, k)):
                # arrival strictly less than lookback after the lmd
                allrows.append((t + rnd.randrange(0, lookback), rnd.random(), t, row))
    allrows.sort(key=lambda a: (a[0], a[1]))
    last = allrows[-1][0]
    # run clocks: random gaps, so batch sizes vary
    clocks = []
    c = 0
    while c < last:
        c += rnd.randint(10, 150) * 60
        clocks.append(c)
    os.makedirs(out, exist_ok=True)
    head = ["id", "v", "t", "op", "lmd"]
    i = 0
    arrived = []
    n = 0
    for clock in clocks:
        while i < len(allrows) and allrows[i][0] <= clock:
            arrived.append(allrows[i][3])
            i += 1
        n += 1
        with open(os.path.join(out, "run%d.csv" % n), "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(head)
            w.writerows(arrived)
    with open(os.path.join(out, "all.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(head)
        w.writerows(r[3] for r in sorted(allrows, key=lambda a: (a[2], a[1])))
    with open(os.path.join(out, "runs"), "w") as f:
        f.write("%d\n" % n)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Seeded, deterministic data generator for dwload's benchmarks.

  gen.py full  --rows N [--seed S] OUT.csv     a full customer extract
  gen.py delta --rows N --dim N [--seed S] [--changed 0.6 --new 0.3] OUT.csv
               a delta against a dimension of N keys: changed keys get a new
               address, new keys are past the dimension, the rest repeat
               their current values with a later lmd (no-op rows)

  gen.py dimrows --rows N [--null S] OUT.csv
               the full extract as dwload's scd2 dimension holds it after the
               initial load (dim_id, id, name, address, phone, lmd,
               valid_from, valid_to, is_current, is_deleted; no header)
  gen.py changes --rows N --dim N [--seed S] [--null S] CLOSE.csv NEW.csv
               the writes the delta of the same arguments makes: the versions
               it closes (id, valid_to) and the versions it opens (as
               dimrows, surrogate keys after the dimension's); no header

Columns of full and delta: id,name,address,phone,lmd.  NULL is written as
--null (default empty).  The same arguments give the same bytes.
dimrows and changes feed the floors in bench/run: the bulk loader doing only
the writes dwload's result needs.
"""
import argparse
import random


def customer(rng, i, variant=0):
    return (i, f"name{i}", f"{(i * 7919 + variant) % 99991} Street {i % 977}",
            f"555-{(i * 31 + variant) % 10000:04d}")


def delta_rows(a, rng):
    """(key, variant, lmd, kind) of the delta, kind changed, same or new."""
    n_changed = int(a.rows * a.changed)
    n_new = int(a.rows * a.new)
    keys = rng.sample(range(1, a.dim + 1), a.rows - n_new)
    for j, k in enumerate(keys):
        sec = j % 3600
        lmd = "2024-01-02 %02d:%02d:%02d" % (sec // 3600, (sec // 60) % 60, sec % 60)
        yield k, (1 if j < n_changed else 0), lmd, ("changed" if j < n_changed else "same")
    for j in range(n_new):
        yield a.dim + 1 + j, 0, "2024-01-02 00:00:01", "new"


def dim_row(sk, c, lmd, null):
    return "%d,%d,%s,%s,%s,%s,%s,%s,1,0\n" % ((sk,) + c + (lmd, lmd, null))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kind", choices=["full", "delta", "dimrows", "changes"])
    ap.add_argument("out")
    ap.add_argument("out2", nargs="?")
    ap.add_argument("--rows", type=int, required=True)
    ap.add_argument("--dim", type=int, default=0)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--changed", type=float, default=0.6)
    ap.add_argument("--new", type=float, default=0.3)
    ap.add_argument("--null", default="")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    if a.kind == "dimrows":
        with open(a.out, "w") as f:
            for i in range(1, a.rows + 1):
                f.write(dim_row(i, customer(rng, i), "2024-01-01 00:00:00", a.null))
        return
    if a.kind == "changes":
        if not a.out2:
            ap.error("changes needs CLOSE.csv and NEW.csv")
        sk = a.dim
        with open(a.out, "w") as fc, open(a.out2, "w") as fn:
            for k, variant, lmd, kind in delta_rows(a, rng):
                if kind == "same":
                    continue
                if kind == "changed":
                    fc.write("%d,%s\n" % (k, lmd))
                sk += 1
                fn.write(dim_row(sk, customer(rng, k, variant), lmd, a.null))
        return
    with open(a.out, "w") as f:
        f.write("id,name,address,phone,lmd\n")
        if a.kind == "full":
            for i in range(1, a.rows + 1):
                f.write("%d,%s,%s,%s,2024-01-01 00:00:00\n" % customer(rng, i))
            return
        for k, variant, lmd, _ in delta_rows(a, rng):
            f.write("%d,%s,%s,%s,%s\n" % (customer(rng, k, variant) + (lmd,)))


if __name__ == "__main__":
    main()

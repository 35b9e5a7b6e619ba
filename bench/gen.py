#!/usr/bin/env python3
"""Seeded, deterministic data generator for dwload's benchmarks.

  gen.py full  --rows N [--seed S] OUT.csv     a full customer extract
  gen.py delta --rows N --dim N [--seed S] [--changed 0.6 --new 0.3] OUT.csv
               a delta against a dimension of N keys: changed keys get a new
               address, new keys are past the dimension, the rest repeat
               their current values with a later lmd (no-op rows)

Columns: id,name,address,phone,lmd.  The same arguments give the same bytes.
"""
import argparse
import random


def customer(rng, i, variant=0):
    return (i, f"name{i}", f"{(i * 7919 + variant) % 99991} Street {i % 977}",
            f"555-{(i * 31 + variant) % 10000:04d}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kind", choices=["full", "delta"])
    ap.add_argument("out")
    ap.add_argument("--rows", type=int, required=True)
    ap.add_argument("--dim", type=int, default=0)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--changed", type=float, default=0.6)
    ap.add_argument("--new", type=float, default=0.3)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    with open(a.out, "w") as f:
        f.write("id,name,address,phone,lmd\n")
        if a.kind == "full":
            for i in range(1, a.rows + 1):
                f.write("%d,%s,%s,%s,2024-01-01 00:00:00\n" % customer(rng, i))
            return
        n_changed = int(a.rows * a.changed)
        n_new = int(a.rows * a.new)
        keys = rng.sample(range(1, a.dim + 1), a.rows - n_new)
        for j, k in enumerate(keys):
            variant = 1 if j < n_changed else 0
            sec = j % 3600
            f.write("%d,%s,%s,%s,2024-01-02 %02d:%02d:%02d\n"
                    % (customer(rng, k, variant) + (sec // 3600, (sec // 60) % 60, sec % 60)))
        for j in range(n_new):
            k = a.dim + 1 + j
            f.write("%d,%s,%s,%s,2024-01-02 00:00:01\n" % customer(rng, k))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Checks a Prometheus textfile as node_exporter's textfile collector reads
it (the text exposition format 0.0.4), for metrics.sh.

    python3 tests/integration/prom_check.py FILE

Every line is "# HELP name text", "# TYPE name type" or a sample
"name{label="value",...} value"; names and label names are valid, label
values properly quoted and escaped, a name's HELP and TYPE come once and
before its samples, its samples are together, no series is repeated, the
file ends with a newline.  Prints the samples as one JSON object
{"name{label=value,...}": value} (labels sorted), or the first problem with
its line number, and exits 1.  Every name must have HELP and TYPE.
"""
import json
import re
import sys

NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
VALUE = r'"(?:[^"\\\n]|\\[\\"n])*"'
LABEL = r"([a-zA-Z_][a-zA-Z0-9_]*)=(%s)" % VALUE
ONE = r"[a-zA-Z_][a-zA-Z0-9_]*=%s" % VALUE
SAMPLE = re.compile(r"^(%s)(?:\{(%s(?:,%s)*)?\})? (\S+)$" % (NAME, ONE, ONE))
TYPES = {"counter", "gauge", "histogram", "summary", "untyped"}


def bad(n, why):
    print("line %d: %s" % (n, why))
    sys.exit(1)


text = open(sys.argv[1], encoding="utf-8").read()
if not text.endswith("\n"):
    bad(text.count("\n") + 1, "the file does not end with a newline")
seen_help, seen_type, done, samples = set(), set(), set(), {}
current = None
for n, line in enumerate(text.split("\n")[:-1], 1):
    if line.startswith("#"):
        m = re.match(r"^# (HELP|TYPE) (%s) (.+)$" % NAME, line)
        if not m:
            bad(n, "a comment that is neither HELP nor TYPE: " + line)
        kind, name, rest = m.groups()
        if name in done or name == current:
            bad(n, "%s of %s after its samples" % (kind, name))
        seen = seen_help if kind == "HELP" else seen_type
        if name in seen:
            bad(n, "a second %s for %s" % (kind, name))
        if kind == "TYPE" and rest not in TYPES:
            bad(n, "unknown type " + rest)
        seen.add(name)
        continue
    m = SAMPLE.match(line)
    if not m:
        bad(n, "not a sample: " + line)
    name, labels, value = m.group(1), m.group(2) or "", m.group(3)
    if name not in seen_help or name not in seen_type:
        bad(n, "%s has no HELP or no TYPE before its samples" % name)
    if name != current:
        if name in done:
            bad(n, "samples of %s are not together" % name)
        if current:
            done.add(current)
        current = name
    try:
        v = float(value)
    except ValueError:
        bad(n, "not a number: " + value)
    pairs = sorted(re.findall(LABEL, labels))
    if len({k for k, _ in pairs}) != len(pairs):
        bad(n, "a label given twice")
    key = "%s{%s}" % (name, ",".join("%s=%s" % (k, v[1:-1]) for k, v in pairs))
    if key in samples:
        bad(n, "a repeated series: " + key)
    samples[key] = v
print(json.dumps(samples, sort_keys=True))

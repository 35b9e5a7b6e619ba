#!/usr/bin/env python3
"""Validates OpenLineage events, one JSON object a line, for lineage.sh.

    python3 tests/integration/ol_check.py SCHEMA_DIR FILE

Every line must be a RunEvent valid against SCHEMA_DIR/OpenLineage.json
(vendored, tests/data/openlineage), its known facets against their own
schemas (outputStatistics, errorMessage, dwload); runId must be a UUID,
eventTime an ISO 8601 date-time with a zone, producer and schemaURL
absolute URIs (the formats jsonschema leaves unchecked without extra
packages are checked here).  Prints "ok N" or the first problem, with its
line number, and exits 1.
"""
import datetime
import json
import os
import sys
import urllib.parse
import uuid

import jsonschema

DIR, FILE = sys.argv[1], sys.argv[2]


def load(name):
    with open(os.path.join(DIR, name), encoding="utf-8") as f:
        return json.load(f)


SCHEMAS = {n: load(n) for n in ("OpenLineage.json", "OutputStatisticsOutputDatasetFacet.json",
                                "ErrorMessageRunFacet.json", "DwloadRunFacet.json")}


def validator(name):
    schema = SCHEMAS[name]
    cls = jsonschema.validators.validator_for(schema)
    try:  # jsonschema >= 4.18
        import referencing
        reg = referencing.Registry().with_resources(
            (s["$id"], referencing.Resource.from_contents(s)) for s in SCHEMAS.values())
        return cls(schema, registry=reg)
    except ImportError:  # Debian's 4.10
        store = {s["$id"]: s for s in SCHEMAS.values()}
        return cls(schema, resolver=jsonschema.RefResolver.from_schema(schema, store=store))


EVENT = validator("OpenLineage.json")
FACETS = [("run", "errorMessage", validator("ErrorMessageRunFacet.json")),
          ("run", "dwload", validator("DwloadRunFacet.json")),
          ("output", "outputStatistics", validator("OutputStatisticsOutputDatasetFacet.json"))]


def uri(v):
    p = urllib.parse.urlparse(v)
    return bool(p.scheme and p.netloc)


def problem(ev):
    err = jsonschema.exceptions.best_match(EVENT.iter_errors(ev))
    if err:
        return "not a valid OpenLineage event: %s at %s" % (err.message, "/".join(map(str, err.path)))
    if "eventType" not in ev or "run" not in ev:
        return "not a RunEvent"
    for where, name, v in FACETS:
        holders = [ev["run"].get("facets", {})] if where == "run" else \
            [o.get("outputFacets", {}) for o in ev.get("outputs", [])]
        for h in holders:
            if name in h:
                err = jsonschema.exceptions.best_match(v.iter_errors({name: h[name]}))
                if err:
                    return "facet %s: %s" % (name, err.message)
    try:
        if str(uuid.UUID(ev["run"]["runId"])) != ev["run"]["runId"]:
            return "runId is not a UUID in canonical form"
    except ValueError:
        return "runId is not a UUID"
    t = ev["eventTime"]
    try:
        d = datetime.datetime.fromisoformat(t.replace("Z", "+00:00"))
    except ValueError:
        return "eventTime is not ISO 8601: " + t
    if d.tzinfo is None:
        return "eventTime has no zone: " + t
    for k in ("producer", "schemaURL"):
        if not uri(ev.get(k, "")):
            return k + " is not an absolute URI"
    return None


n = 0
with open(FILE, encoding="utf-8") as f:
    for i, line in enumerate(f, 1):
        try:
            ev = json.loads(line)
        except ValueError as e:
            print("line %d: not JSON: %s" % (i, e))
            sys.exit(1)
        why = problem(ev)
        if why:
            print("line %d: %s" % (i, why))
            sys.exit(1)
        n += 1
print("ok %d" % n)

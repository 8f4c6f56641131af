#!/usr/bin/python3
"""Writes pollux/data/apps/linear.csv: the step and synchronisation times
that the Pollux (OSDI'21) artifact's simulator interpolates for placements
of five nodes or more, for every such point its Tiresias and Optimus runs
can reach.

Why: for a placement not measured in placements.csv (any placement over
five nodes or more) the artifact calls scipy's LinearNDInterpolator over
(num_nodes, num_replicas, local_bsz). Brigade does not reimplement the
Delaunay triangulation; it reads the values the artifact computes. Tests
need no Python: this script is run by hand when the set of points changes.

Usage (Debian 12: python3-scipy 1.10.1, python3-numpy 1.24, python3-pandas 1.5):

    git -C <adaptdl clone> archive osdi21-artifact simulator | tar -x -C /tmp/art
    /usr/bin/python3 scripts/pollux-linear.py /tmp/art/simulator > pollux/data/apps/linear.csv

The values come from the artifact's own Application.get_throughput (imported
from the simulator directory given), called one point at a time as the
artifact calls it, so the triangulation and its walk are the artifact's.
The points are those the jobs of pollux/data/workloads can reach:
  - Tiresias (every load): a job runs on its CSV num_replicas R at its CSV
    batch size, spread over ceil(R/4)..min(R, 16) nodes;
  - Optimus (every load): a job runs on any n in 1..max_replicas GPUs
    (max_replicas = batch_size // min_local_bsz, 1 for ncf, at most the 64
    GPUs), spread over ceil(n/4)..min(n, 16) nodes; its predictions use the
    packed placement (4, 4, ..., rest), one of those.
For each, the per-GPU batch is the artifact's (Job.update_local_bsz, and
OptimusPolicy.predict_step_time, which differ only on one GPU). Output is
sorted and written with Python's repr of each float (exact round trip).
"""
import csv
import glob
import math
import os
import sys


def atomic_bsz(app, batch, n, one_gpu_accum):
    local = math.ceil(batch / n - 1e-8)
    accum = math.ceil(local / app.max_local_bsz - 1e-8) - 1
    if n == 1 and one_gpu_accum:
        accum = max(1, accum)
    atomic = math.ceil(local / (accum + 1) - 1e-8)
    return min(atomic, int(app.max_batch_size / (n * (accum + 1))))


def spread(nodes, n):
    """A placement of n GPUs over nodes nodes (which ones does not matter
    to the interpolation over five nodes or more)."""
    base, extra = divmod(n, nodes)
    return tuple(base + (1 if i < extra else 0) for i in range(nodes))


def main():
    sim = os.path.abspath(sys.argv[1])
    repo = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    sys.path.insert(0, sim)
    os.chdir(sim)
    from applications import APPLICATIONS  # the artifact's own code

    points = set()  # (app, nodes, replicas, local)

    def add(app_name, n, local):
        for nodes in range(max(5, math.ceil(n / 4)), min(n, 16) + 1):
            points.add((app_name, nodes, n, local))

    wdir = os.path.join(repo, "pollux", "data", "workloads")
    for path in sorted(glob.glob(os.path.join(wdir, "*", "workload-*.csv"))):
        with open(path) as f:
            for row in csv.DictReader(f):
                name, batch = row["application"], int(row["batch_size"])
                app = APPLICATIONS[name]
                r = int(row["num_replicas"])
                add(name, r, atomic_bsz(app, batch, r, batch > app.init_batch_size))
                max_r = 1 if name == "ncf" else batch // app.min_local_bsz
                for n in range(1, min(max_r, 64) + 1):
                    add(name, n, atomic_bsz(app, batch, n, batch > app.init_batch_size))
                    add(name, n, atomic_bsz(app, batch, n, True))

    out = csv.writer(sys.stdout, lineterminator="\n")
    out.writerow(["app", "num_nodes", "num_replicas", "local_bsz", "step_time", "sync_time"])
    for name, nodes, n, local in sorted(points):
        step, sync = APPLICATIONS[name].get_throughput(spread(nodes, n), local)
        if step != step or sync != sync:
            continue  # outside the data's hull: the artifact asserts there
        out.writerow([name, nodes, n, local, repr(float(step)), repr(float(sync))])


if __name__ == "__main__":
    main()

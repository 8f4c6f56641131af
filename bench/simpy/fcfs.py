"""Strict FCFS replay of the Philly trace on a pool of 512 GPUs, in SimPy.

Each job waits for its submit time, then for num_gpus GPUs from the pool
(first come, first served: a job that does not fit blocks those behind it),
holds them for its duration and gives them back. Prints the mean wait and
what reading and simulating took. Usage: python3 fcfs.py philly.csv
"""
import csv
import sys
import time
from datetime import datetime, timezone

import simpy

GPUS = 512


def read_trace(path):
    jobs = []
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            t = datetime.strptime(row["timestamp"], "%Y-%m-%d %H:%M:%S")
            submit = t.replace(tzinfo=timezone.utc).timestamp()
            jobs.append((submit, float(row["duration"]), int(row["num_gpus"])))
    first = min(submit for submit, _, _ in jobs)
    # Submission order; jobs submitted together keep the file's order.
    return sorted([(s - first, d, g) for s, d, g in jobs], key=lambda j: j[0])


def job(env, pool, submit, duration, gpus, waits):
    yield env.timeout(submit)
    yield pool.get(gpus)
    waits.append(env.now - submit)
    yield env.timeout(duration)
    yield pool.put(gpus)


def main():
    t0 = time.process_time()
    jobs = read_trace(sys.argv[1])
    t1 = time.process_time()
    env = simpy.Environment()
    pool = simpy.Container(env, capacity=GPUS, init=GPUS)
    waits = []
    for submit, duration, gpus in jobs:
        env.process(job(env, pool, submit, duration, gpus, waits))
    env.run()
    t2 = time.process_time()
    print(f"jobs {len(waits)}")
    print(f"mean wait {sum(waits) / len(waits):.6f} s")
    print(f"read {t1 - t0:.3f} s CPU, simulate {t2 - t1:.3f} s CPU")


if __name__ == "__main__":
    main()

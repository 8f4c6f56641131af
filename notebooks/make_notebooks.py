#!/usr/bin/env python3
"""Writes the notebooks in this folder (nbformat 4 JSON, no outputs).

The notebooks are generated so that their code lives in one reviewable
place and the .ipynb files stay small and diff-friendly:

    python3 notebooks/make_notebooks.py          # rewrite the .ipynb files
    python3 notebooks/make_notebooks.py --check  # fail if they are stale (CI)

Standard library only.
"""

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def md(text):
    return {"cell_type": "markdown", "metadata": {}, "source": text.strip("\n").splitlines(True)}


def code(text):
    return {
        "cell_type": "code",
        "execution_count": None,
        "metadata": {},
        "outputs": [],
        "source": text.strip("\n").splitlines(True),
    }


def notebook(cells):
    return {
        "cells": cells,
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
        },
        "nbformat": 4,
        "nbformat_minor": 4,
    }


# Shared by both notebooks: find the results folder, and read a table from
# its Parquet file when pandas can, else from its CSV twin, saying which.
LOADER = r'''
import json
import os
from pathlib import Path

import numpy as np
import pandas as pd
import matplotlib.pyplot as plt

%matplotlib inline
plt.rcParams["figure.figsize"] = (9, 4.5)
plt.rcParams["figure.dpi"] = 90
pd.set_option("display.width", 160)


def parquet_engine():
    """The engine pandas.read_parquet would use, or None."""
    for name in ("pyarrow", "fastparquet"):
        try:
            __import__(name)
            return name
        except ImportError:
            pass
    return None


def load_table(folder, name):
    """Reads NAME.parquet from folder, or its CSV twin NAME.csv when pandas
    has no Parquet engine (pyarrow or fastparquet) or there is no Parquet
    file. The two hold the same columns."""
    pq, csv = Path(folder) / (name + ".parquet"), Path(folder) / (name + ".csv")
    engine = parquet_engine()
    if pq.exists() and engine:
        print(f"{name}: read {pq} with {engine}")
        return pd.read_parquet(pq, engine=engine)
    if csv.exists():
        why = "no Parquet engine (pip install pyarrow)" if pq.exists() else "no Parquet file"
        print(f"{name}: read the CSV twin {csv} ({why})")
        return pd.read_csv(csv)
    raise FileNotFoundError(f"neither {pq} nor {csv} exists; run brigade with --csv or install pyarrow")
'''


def compare_policies():
    return notebook([
        md('''
# Comparing scheduling policies

This notebook reads the results folder of one `brigade sim` run (several
policies on the same workload and cluster) and draws the comparisons:
the summary table, CDFs of wait and job completion time (JCT), p50/p95/p99
bars, GPU utilisation and queue length over time, each tenant's GPU share
against its fair share, and the longest waits per tenant.

Set `BRIGADE_RESULTS` to the folder (`brigade sim --out DIR`); the default is
`../brigade-out`, relative to this notebook. Column names and units are in
`docs/metrics.md` and `docs/results.md`.
'''),
        code(LOADER + r'''
RESULTS = Path(os.environ.get("BRIGADE_RESULTS", "../brigade-out"))
if not (RESULTS / "summary.json").exists():
    raise FileNotFoundError(f"{RESULTS.resolve()} holds no summary.json: run `brigade sim --out DIR` and set BRIGADE_RESULTS=DIR")
print("results:", RESULTS.resolve())
'''),
        md("## Summary\n\nOne row per policy, from `summary.json` (times in hours)."),
        code(r'''
summary = json.loads((RESULTS / "summary.json").read_text())
policies = [s["policy"] for s in summary]
H = 3600.0
table = pd.DataFrame({
    "jobs": [s["jobs_submitted"] for s in summary],
    "succeeded": [s["jobs_succeeded"] for s in summary],
    "wait mean h": [s["wait_s"]["mean"] / H for s in summary],
    "wait p50 h": [s["wait_s"]["p50"] / H for s in summary],
    "wait p99 h": [s["wait_s"]["p99"] / H for s in summary],
    "JCT mean h": [s["jct_s"]["mean"] / H for s in summary],
    "JCT p99 h": [s["jct_s"]["p99"] / H for s in summary],
    "bsld mean": [s["bounded_slowdown"]["mean"] for s in summary],
    "util %": [100 * s["gpu_utilisation_arrivals"] for s in summary],
    "starved": [s["starvation"]["starved_jobs"] for s in summary],
    "jain (slowdown)": [s["jain_index_slowdown"] for s in summary],
}, index=pd.Index(policies, name="policy"))
print(f"seed {summary[0]['seed']}, cluster {summary[0]['cluster']}")
print(summary[0]["workload"])
table.round(3)
'''),
        md('''
## Per-job records

`jobs` has one row per job and attempt and policy. The CDFs below use each
job's last attempt (its final state), and the recomputed means are set
beside the summary's as a check.
'''),
        code(r'''
jobs = load_table(RESULTS, "jobs")
last = jobs.sort_values(["policy", "id", "attempts"]).groupby(["policy", "id"], sort=False).tail(1)
print(f"{len(jobs)} rows, {last.groupby('policy').size().iloc[0]} jobs per policy")
check = last.groupby("policy")[["wait_s", "jct_s"]].mean().div(H).reindex(policies)
check.columns = ["wait mean h (jobs)", "JCT mean h (jobs)"]
check.join(table[["wait mean h", "JCT mean h"]]).round(3)
'''),
        md("## CDFs of wait and JCT\n\nLog time axis; a wait of 0 is drawn at 1 s."),
        code(r'''
fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
for ax, col, title in zip(axes, ["wait_s", "jct_s"], ["wait", "job completion time"]):
    for p in policies:
        x = np.sort(np.maximum(last.loc[last.policy == p, col].to_numpy(dtype=float), 1.0))
        ax.step(x, np.arange(1, len(x) + 1) / len(x), where="post", label=p)
    ax.set_xscale("log")
    ax.set_xlabel(f"{title} (s, log scale)")
    ax.set_ylabel("fraction of jobs")
    ax.set_title(f"CDF of {title}")
    ax.grid(True, which="both", alpha=0.3)
axes[0].legend()
plt.tight_layout()
plt.show()
'''),
        md("## p50, p95 and p99 per policy\n\nFrom `summary.json`."),
        code(r'''
fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
for ax, key, title in zip(axes, ["wait_s", "jct_s"], ["wait", "JCT"]):
    q = pd.DataFrame({k: [s[key][k] / H for s in summary] for k in ["p50", "p95", "p99"]}, index=policies)
    q.plot.bar(ax=ax, rot=0)
    ax.set_ylabel(f"{title} (h)")
    ax.set_title(f"{title} percentiles")
    ax.grid(True, axis="y", alpha=0.3)
plt.tight_layout()
plt.show()
'''),
        md("## Utilisation and queue length over time\n\nFrom `timeseries`, one point per bucket."),
        code(r'''
ts = load_table(RESULTS, "timeseries")
fig, axes = plt.subplots(2, 1, figsize=(12, 7), sharex=True)
for p in policies:
    s = ts[ts.policy == p]
    axes[0].plot(s.bucket_start_s / H, 100 * s.gpu_utilisation, label=p)
    axes[1].plot(s.bucket_start_s / H, s.queue_length, label=p)
axes[0].set_ylabel("GPU utilisation (%)")
axes[1].set_ylabel("queue length (jobs)")
axes[1].set_xlabel("time since the first submission (h)")
axes[0].legend()
for ax in axes:
    ax.grid(True, alpha=0.3)
plt.tight_layout()
plt.show()
'''),
        md("## GPU share per tenant against its fair share"),
        code(r'''
shares = pd.DataFrame([
    {"policy": s["policy"], "tenant": t["tenant"], "share": t["share"], "fair_share": t["fair_share"]}
    for s in summary for t in s["tenants"]
])
wide = shares.pivot(index="tenant", columns="policy", values="share")[policies]
ax = (100 * wide).plot.bar(figsize=(12, 4.5), rot=45)
fair = shares.drop_duplicates("tenant").set_index("tenant").fair_share.reindex(wide.index)
ax.scatter(range(len(fair)), 100 * fair, marker="_", s=400, color="black", zorder=3, label="fair share")
ax.set_ylabel("share of GPU-hours (%)")
ax.legend()
ax.grid(True, axis="y", alpha=0.3)
plt.tight_layout()
plt.show()
'''),
        md("## Starvation: the longest wait per tenant"),
        code(r'''
longest = last.groupby(["tenant", "policy"]).wait_s.max().div(H).unstack()[policies]
ax = longest.plot.bar(figsize=(12, 4.5), rot=45)
ax.set_ylabel("longest wait (h)")
for s in summary:
    print(f"{s['policy']}: {s['starvation']['starved_jobs']} jobs waited over {s['starvation']['threshold_s'] / H:.1f} h")
ax.grid(True, axis="y", alpha=0.3)
plt.tight_layout()
plt.show()
'''),
    ])


def fill_notebook():
    return notebook([
        md('''
# Cluster fill: GPU allocation against arrived load

This notebook reads the output of `brigade fill` (`fill.csv`: trace, policy,
seed, arrived_pct, gpu_alloc_pct, frag_pct) and draws, per trace, the mean
over seeds of the allocated GPU share and of the fragmentation against the
arrived load, one line per placement policy, with a band of one standard
deviation.

Set `BRIGADE_FILL_RESULTS` to the `--out` folder (default `../fill-out`,
relative to this notebook); with `--all-traces`, point it at the parent
folder: every `fill.csv` below it is read.
'''),
        code(LOADER + r'''
RESULTS = Path(os.environ.get("BRIGADE_FILL_RESULTS", "../fill-out"))
files = sorted(RESULTS.rglob("fill.csv"))
if not files:
    raise FileNotFoundError(f"no fill.csv under {RESULTS.resolve()}: run `brigade fill --out DIR` and set BRIGADE_FILL_RESULTS=DIR")
fill = pd.concat([pd.read_csv(f) for f in files], ignore_index=True)
print(f"{len(files)} file(s), {len(fill)} rows, traces {sorted(fill.trace.unique())}, "
      f"policies {list(fill.policy.unique())}, {fill.seed.nunique()} seeds")
'''),
        md("## Means over seeds at 100% arrived load and at the end"),
        code(r'''
rows = []
for (trace, policy), g in fill.groupby(["trace", "policy"], sort=False):
    full = g[g.arrived_pct == 100]
    end = g[g.arrived_pct == g.arrived_pct.max()]
    rows.append({"trace": trace, "policy": policy,
                 "alloc@100%": full.gpu_alloc_pct.mean(), "alloc@end": end.gpu_alloc_pct.mean(),
                 "frag@100%": full.frag_pct.mean(), "frag@end": end.frag_pct.mean()})
pd.DataFrame(rows).set_index(["trace", "policy"]).round(2)
'''),
        md("## Curves"),
        code(r'''
for trace, t in fill.groupby("trace", sort=False):
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    for ax, col, label in zip(axes, ["gpu_alloc_pct", "frag_pct"], ["GPUs allocated (%)", "fragmentation (%)"]):
        for policy, g in t.groupby("policy", sort=False):
            m = g.groupby("arrived_pct")[col].agg(["mean", "std"]).fillna(0)
            ax.plot(m.index, m["mean"], label=policy)
            ax.fill_between(m.index, m["mean"] - m["std"], m["mean"] + m["std"], alpha=0.15)
        ax.set_xlabel("arrived GPU requests (% of capacity)")
        ax.set_ylabel(label)
        ax.grid(True, alpha=0.3)
    axes[0].plot([0, 100], [0, 100], color="grey", linestyle=":", label="all placed")
    axes[0].legend()
    fig.suptitle(trace)
    plt.tight_layout()
    plt.show()
'''),
    ])


NOTEBOOKS = {
    "compare-policies.ipynb": compare_policies,
    "fill.ipynb": fill_notebook,
}


def render(nb):
    return json.dumps(nb, indent=1, ensure_ascii=False) + "\n"


def main(argv):
    check = "--check" in argv
    stale = []
    for name, make in NOTEBOOKS.items():
        path = os.path.join(HERE, name)
        text = render(make())
        if check:
            try:
                with open(path, encoding="utf-8") as f:
                    if f.read() != text:
                        stale.append(name)
            except FileNotFoundError:
                stale.append(name)
            continue
        tmp = path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
        print("wrote", path)
    if stale:
        print("stale notebooks (run python3 notebooks/make_notebooks.py):", ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

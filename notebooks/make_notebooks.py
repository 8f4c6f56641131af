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


# Shared by the notebooks: find the results folder, and read a table from
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


def serving_notebook():
    return notebook([
        md('''
# Serving: latency, replicas and errors per variant

This notebook reads the output of one `brigade serve` run (inference
services beside a batch workload, under several variants: routing, health
ejection, autoscaling) and draws the comparisons: the summary table per
variant, service and request class, then per service the E2E p99 over time,
the ready replicas and GPUs held against the offered arrival rate, the error
rate over time, and a Little's-law check per replica.

Set `BRIGADE_SERVING_RESULTS` to the folder (`brigade serve --out DIR`); the
default is `../serving-out`, relative to this notebook (what `brigade serve`
writes when run from the repository root). Files, keys and units are in
`docs/serving.md`.
'''),
        code(LOADER + r'''
RESULTS = Path(os.environ.get("BRIGADE_SERVING_RESULTS", "../serving-out"))
if not (RESULTS / "serving_summary.json").exists():
    raise FileNotFoundError(f"{RESULTS.resolve()} holds no serving_summary.json: run `brigade serve --out DIR` "
                            "and set BRIGADE_SERVING_RESULTS=DIR")
print("results:", RESULTS.resolve())
'''),
        md('''
## Summary

One row per variant, service and class (`all` is every class together),
from `serving_summary.json`. Latencies in seconds; errors count errors and
timeouts over finished requests; SLO is the share of requests within their
class's targets. The service-wide columns (GPU-hours, mean replicas,
scale-outs, ejections) and the variant's batch columns (batch jobs
preempted, the batch jobs' mean extra wait against the batch-only baseline,
in minutes) are on the `all` row only.
'''),
        code(r'''
summary = json.loads((RESULTS / "serving_summary.json").read_text())
variants = [v["name"] for v in summary["variants"]]
services = list(dict.fromkeys(s["name"] for v in summary["variants"] for s in v["services"]))
print(f"experiment {summary['experiment']}, cluster {summary['cluster']}, seed {summary['seed']}, "
      f"horizon {summary['horizon_s'] / 60:g} min")
print("batch:", summary.get("batch_workload", "none"))
print("variants:", variants, "services:", services)

rows = []
for v in summary["variants"]:
    batch = v.get("batch") or {}
    for s in v["services"]:
        for c in [s["all"]] + s["classes"]:
            row = {
                "variant": v["name"], "service": s["name"], "class": c["name"],
                "rps": c["throughput_rps"],
                "TTFT p50": c["vllm:time_to_first_token_seconds"]["p50"], "TTFT p99": c["vllm:time_to_first_token_seconds"]["p99"],
                "E2E p50": c["vllm:e2e_request_latency_seconds"]["p50"], "E2E p99": c["vllm:e2e_request_latency_seconds"]["p99"],
                "errors %": 100 * c["error_rate"], "SLO %": 100 * c["slo_attained"],
            }
            if c is s["all"]:
                row.update({
                    "GPU-h": s["gpu_hours"], "mean repl": s["mean_replicas"],
                    "scale-outs": s["scale_outs"], "ejections": s["ejections"],
                    "batch preempted": s["batch_jobs_preempted"],
                    "batch +wait min": batch.get("extra_wait_mean_s", np.nan) / 60,
                })
            rows.append(row)
table = pd.DataFrame(rows).set_index(["variant", "service", "class"])
counts = ["scale-outs", "ejections", "batch preempted"]
table[counts] = table[counts].astype("Int64")
table.round(3).astype(object).where(table.notna(), "")
'''),
        md('''
## Over time

From `serving_timeseries.csv`, one point per bucket (latencies over the
requests completed in the bucket, counts at its end). The offered rate is
the arrivals in a bucket divided by the bucket width.
'''),
        code(r'''
ts = pd.read_csv(RESULTS / "serving_timeseries.csv")
steps = ts.groupby(["variant", "service"]).bucket_start_s.diff().dropna()
BUCKET = float(steps.mode().iloc[0]) if len(steps) else float(summary["horizon_s"])
ts["t_min"] = ts.bucket_start_s / 60
ts["t_end_min"] = (ts.bucket_start_s + BUCKET) / 60  # where the end-of-bucket counts belong
ts["offered_rps"] = ts.arrivals / BUCKET
finished = ts.completed + ts.errors
ts["error_pct"] = (100 * ts.errors / finished).where(finished > 0)
print(f"{len(ts)} rows, bucket {BUCKET:g} s")
'''),
        md("### E2E p99 per bucket\n\nLog scale; buckets with no completed request are left out."),
        code(r'''
for svc in services:
    fig, ax = plt.subplots(figsize=(12, 4.5))
    for v in variants:
        s = ts[(ts.variant == v) & (ts.service == svc)]
        ax.plot(s.t_min, s.e2e_p99_s.where(s.e2e_p99_s > 0), label=v)
    ax.set_yscale("log")
    ax.set_xlabel("time (min)")
    ax.set_ylabel("E2E p99 (s, log scale)")
    ax.set_title(f"{svc}: end-to-end latency p99 per bucket")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    plt.tight_layout()
    plt.show()
'''),
        md('''
### Ready replicas and GPUs held against the offered rate

Counts at each bucket's end, drawn from there; the offered arrival rate
(grey, right axis) is drawn once when every variant saw the same arrivals,
else once per variant (dotted).
'''),
        code(r'''
for svc in services:
    t = ts[ts.service == svc]
    offered = t.pivot(index="t_min", columns="variant", values="offered_rps")[variants]
    same = all(offered[v].equals(offered[variants[0]]) for v in variants)
    fig, axes = plt.subplots(1, 2, figsize=(13, 4.5))
    for ax, col, label in zip(axes, ["replicas_ready", "gpus"], ["ready replicas", "GPUs held"]):
        for v in variants:
            s = t[t.variant == v]
            ax.step(s.t_end_min, s[col], where="post", label=v)
        ax.set_xlabel("time (min)")
        ax.set_ylabel(label)
        ax.grid(True, alpha=0.3)
        rate = ax.twinx()
        if same:
            rate.plot(offered.index, offered[variants[0]], color="grey", alpha=0.6, label="offered rate")
        else:
            for v in variants:
                rate.plot(offered.index, offered[v], linestyle=":", alpha=0.6, label=f"offered ({v})")
        rate.set_ylabel("offered rate (requests/s)")
        rate.set_ylim(bottom=0)
        ax.set_zorder(rate.get_zorder() + 1)
        ax.patch.set_visible(False)
    lines, labels = axes[0].get_legend_handles_labels()
    more, more_labels = rate.get_legend_handles_labels()
    axes[0].legend(lines + more, labels + more_labels, fontsize="small")
    fig.suptitle(f"{svc}: ready replicas and GPUs held, against the offered rate")
    plt.tight_layout()
    plt.show()
'''),
        md("### Error rate\n\nErrors and timeouts over the requests finished in each bucket."),
        code(r'''
for svc in services:
    fig, ax = plt.subplots(figsize=(12, 4.5))
    for v in variants:
        s = ts[(ts.variant == v) & (ts.service == svc)]
        ax.plot(s.t_min, s.error_pct, label=v)
    ax.set_xlabel("time (min)")
    ax.set_ylabel("errors (% of finished)")
    ax.set_ylim(-2, 102)
    ax.set_title(f"{svc}: error rate per bucket")
    ax.grid(True, alpha=0.3)
    ax.legend()
    plt.tight_layout()
    plt.show()
'''),
        md('''
## Little's law per replica

From `replicas.csv`: each replica's mean number of requests in flight over
its serving time (L) against its throughput × the mean time a request
spent on it (λW). Requests still in flight at the end, and failed ones,
keep them from being exactly equal. Replicas that never served have no
row in the check.
'''),
        code(r'''
reps = pd.read_csv(RESULTS / "replicas.csv")
served = reps.dropna(subset=["mean_in_flight", "throughput_rps", "mean_time_on_replica_s"])
served = served[served.mean_in_flight > 0].copy()
served["lambda_w"] = served.throughput_rps * served.mean_time_on_replica_s
served["rel_error"] = (served.mean_in_flight - served.lambda_w).abs() / served.mean_in_flight
print(f"{len(reps)} replicas, {len(served)} served requests")
print(served.groupby(["variant", "service"], sort=False).rel_error.agg(["count", "mean", "max"])
      .reindex(variants, level=0).round(5).to_string())
if len(served):
    worst = served.loc[served.rel_error.idxmax()]
    print(f"worst relative error {100 * worst.rel_error:.3f}%: replica {worst.replica} of {worst.service} "
          f"under {worst.variant} (L {worst.mean_in_flight:.3f}, lambda*W {worst.lambda_w:.3f}); "
          f"largest little_error in the file {100 * served.little_error.max():.3f}%")
for svc in services:
    fig, ax = plt.subplots(figsize=(6, 5.5))
    sv = served[served.service == svc]
    for v in variants:
        s = sv[sv.variant == v]
        ax.scatter(s.lambda_w, s.mean_in_flight, s=14, alpha=0.7, label=v)
    if len(sv):
        hi = 1.05 * max(sv.lambda_w.max(), sv.mean_in_flight.max())
        ax.plot([0, hi], [0, hi], color="grey", linestyle=":", label="L = λW")
    ax.set_xlabel("throughput × mean time on replica (λW)")
    ax.set_ylabel("mean requests in flight (L)")
    ax.set_title(f"{svc}: Little's law per replica")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small")
    plt.tight_layout()
    plt.show()
'''),
    ])


NOTEBOOKS = {
    "compare-policies.ipynb": compare_policies,
    "fill.ipynb": fill_notebook,
    "serving.ipynb": serving_notebook,
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

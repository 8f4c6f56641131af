// duckdb-check.mjs DIR: a real DuckDB (@duckdb/node-api, pinned in
// package.json / package-lock.json) reads every Parquet file of a brigade
// results folder and checks that they agree with the CSV twins and
// summary.json: row counts, per-policy sums, failure reasons (words of the
// vocabulary, on failed jobs only, the same in jobs.csv), the request and
// dependency columns (types, sums, deps naming jobs of the run), and the
// schema version in the Parquet metadata against run.json. Any mismatch exits 1
// with a message.
import { DuckDBInstance } from '@duckdb/node-api';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const dir = process.argv[2];
if (!dir) {
  console.error('usage: node duckdb-check.mjs RESULTS_DIR');
  process.exit(2);
}
const failures = [];
const fail = (msg) => failures.push(msg);
const q = (name) => `'${join(dir, name).replaceAll("'", "''")}'`;

const instance = await DuckDBInstance.create(':memory:');
const db = await instance.connect();
const rows = async (sql) => (await db.runAndReadAll(sql)).getRowObjectsJS();
const near = (a, b, tol) => Math.abs(a - b) <= tol * Math.max(1, Math.abs(a), Math.abs(b));

const run = JSON.parse(readFileSync(join(dir, 'run.json'), 'utf8'));
const summary = JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8'));
const parquets = readdirSync(dir).filter((f) => f.endsWith('.parquet')).sort();
for (const want of ['jobs.parquet', 'attempts.parquet', 'timeseries.parquet', 'tenants.parquet']) {
  if (!parquets.includes(want)) fail(`${want} is missing from ${dir}`);
}

// Every Parquet file: readable, its row count equal to its CSV twin's (for
// attempts.parquet, which has none: Σ attempts of jobs.csv), and the schema
// version in its metadata equal to run.json's.
for (const f of parquets) {
  const twin = f === 'attempts.parquet' ? 'jobs.csv' : f.replace(/\.parquet$/, '.csv');
  const count = f === 'attempts.parquet' ? 'sum(attempts::BIGINT)' : 'count(*)';
  const [{ n }] = await rows(`SELECT count(*)::BIGINT AS n FROM read_parquet(${q(f)})`);
  const [{ m }] = await rows(`SELECT ${count}::BIGINT AS m FROM read_csv(${q(twin)}, header = true, all_varchar = true)`);
  console.log(`${f}: ${n} rows (${twin}: ${m})`);
  if (n !== m) fail(`${f} has ${n} rows, ${twin} ${m}`);
  const kv = await rows(`SELECT decode(key) AS k, decode(value) AS v FROM parquet_kv_metadata(${q(f)})`);
  const version = kv.find((r) => r.k === 'brigade.schema_version')?.v;
  if (version !== String(run.schema_version)) {
    fail(`${f}: brigade.schema_version ${version}, run.json schema_version ${run.schema_version}`);
  }
}

// Per-policy sums: jobs.parquet against jobs.csv and summary.json.
const jobSums = (from) => `SELECT policy, count(*)::BIGINT AS jobs,
    sum(wait_s)::DOUBLE AS wait_s, sum(run_s)::DOUBLE AS run_s, sum(jct_s)::DOUBLE AS jct_s,
    sum(gpus)::BIGINT AS gpus, sum(attempts)::BIGINT AS attempts,
    count(*) FILTER (WHERE state = 'succeeded')::BIGINT AS succeeded,
    sum(gpus * gpu_milli / 1000.0 * run_s)::DOUBLE AS gpu_s
  FROM ${from} GROUP BY policy ORDER BY policy`;
const pj = await rows(jobSums(`read_parquet(${q('jobs.parquet')})`));
const cj = await rows(jobSums(`read_csv(${q('jobs.csv')}, header = true, types = {'wait_s': 'DOUBLE', 'run_s': 'DOUBLE', 'jct_s': 'DOUBLE', 'gpus': 'BIGINT', 'gpu_milli': 'BIGINT', 'attempts': 'BIGINT', 'state': 'VARCHAR', 'policy': 'VARCHAR'})`));
if (pj.length !== cj.length || pj.length !== summary.length) {
  fail(`policies: ${pj.length} in jobs.parquet, ${cj.length} in jobs.csv, ${summary.length} in summary.json`);
}
for (const p of pj) {
  const c = cj.find((r) => r.policy === p.policy);
  const s = summary.find((r) => r.policy === p.policy);
  if (!c || !s) {
    fail(`policy ${p.policy}: missing from jobs.csv or summary.json`);
    continue;
  }
  console.log(`${p.policy}: ${p.jobs} jobs, Σwait_s ${p.wait_s.toFixed(6)}, Σrun_s ${p.run_s.toFixed(6)}, Σjct_s ${p.jct_s.toFixed(6)}, Σattempts ${p.attempts}, GPU-h ${(p.gpu_s / 3600).toFixed(6)}`);
  for (const k of ['jobs', 'gpus', 'attempts', 'succeeded']) {
    if (p[k] !== c[k]) fail(`${p.policy} ${k}: jobs.parquet ${p[k]}, jobs.csv ${c[k]}`);
  }
  for (const k of ['wait_s', 'run_s', 'jct_s', 'gpu_s']) {
    if (!near(p[k], c[k], 1e-12)) fail(`${p.policy} Σ${k}: jobs.parquet ${p[k]}, jobs.csv ${c[k]}`);
  }
  if (Number(p.jobs) !== s.jobs_submitted) fail(`${p.policy}: ${p.jobs} rows, summary.json jobs_submitted ${s.jobs_submitted}`);
  if (Number(p.succeeded) !== s.jobs_succeeded) fail(`${p.policy}: ${p.succeeded} succeeded, summary.json ${s.jobs_succeeded}`);
  if (!near(p.gpu_s / 3600, s.gpu_hours_allocated, 1e-9)) fail(`${p.policy}: ${p.gpu_s / 3600} GPU-hours from jobs.parquet, summary.json gpu_hours_allocated ${s.gpu_hours_allocated}`);
  const [{ mean }] = await rows(`SELECT avg(wait_s)::DOUBLE AS mean FROM read_parquet(${q('jobs.parquet')}) WHERE policy = '${p.policy}' AND attempts > 0`);
  if (!near(mean, s.wait_s.mean, 1e-9)) fail(`${p.policy}: mean wait ${mean} from jobs.parquet, summary.json ${s.wait_s.mean}`);
}

// attempts.parquet: per policy, Σ wait_s and Σ run_s over attempts equal
// jobs.csv's (each job's values are sums over its attempts).
const pa = await rows(`SELECT policy, count(*)::BIGINT AS attempts, sum(wait_s)::DOUBLE AS wait_s, sum(run_s)::DOUBLE AS run_s
  FROM read_parquet(${q('attempts.parquet')}) GROUP BY policy ORDER BY policy`);
for (const c of cj) {
  const a = pa.find((r) => r.policy === c.policy);
  if (!a) {
    if (c.attempts !== 0n) fail(`attempts.parquet lacks policy ${c.policy}`);
    continue;
  }
  console.log(`${a.policy}: ${a.attempts} attempts, Σwait_s ${a.wait_s.toFixed(6)}, Σrun_s ${a.run_s.toFixed(6)}`);
  if (a.attempts !== c.attempts) fail(`${c.policy}: ${a.attempts} rows in attempts.parquet, Σ attempts ${c.attempts} in jobs.csv`);
  for (const k of ['wait_s', 'run_s']) {
    if (!near(a[k], c[k], 1e-9)) fail(`${c.policy} Σ${k}: attempts.parquet ${a[k]}, jobs.csv ${c[k]}`);
  }
}

// timeseries.parquet against timeseries.csv (whose means have six decimals).
const tsSums = (from) => `SELECT policy, count(*)::BIGINT AS buckets,
    sum(queue_length)::DOUBLE AS queue_length, sum(running_jobs)::DOUBLE AS running_jobs,
    sum(gpu_utilisation)::DOUBLE AS gpu_utilisation, sum(down_gpus)::DOUBLE AS down_gpus
  FROM ${from} GROUP BY policy ORDER BY policy`;
const pt = await rows(tsSums(`read_parquet(${q('timeseries.parquet')})`));
const ct = await rows(tsSums(`read_csv(${q('timeseries.csv')}, header = true)`));
for (const p of pt) {
  const c = ct.find((r) => r.policy === p.policy);
  if (!c) {
    fail(`timeseries.csv lacks policy ${p.policy}`);
    continue;
  }
  console.log(`${p.policy}: ${p.buckets} buckets, Σqueue_length ${p.queue_length.toFixed(6)}, Σgpu_utilisation ${p.gpu_utilisation.toFixed(6)}`);
  if (p.buckets !== c.buckets) fail(`${p.policy}: ${p.buckets} buckets in timeseries.parquet, ${c.buckets} in timeseries.csv`);
  for (const k of ['queue_length', 'running_jobs', 'gpu_utilisation', 'down_gpus']) {
    if (Math.abs(p[k] - c[k]) > 1e-6 * Number(p.buckets)) fail(`${p.policy} Σ${k}: timeseries.parquet ${p[k]}, timeseries.csv ${c[k]}`);
  }
}
if (pt.length !== ct.length) fail(`timeseries: ${pt.length} policies in Parquet, ${ct.length} in CSV`);

// tenants.parquet (per-tenant GPU share per bucket; its row count against
// tenants.csv is checked above): per policy, Σ allocated_gpus × covered_s
// (covered_s from the same bucket of timeseries.parquet) is the policy's
// gpu_hours_allocated in summary.json, and the tenants' allocated_gpus sum
// to the bucket's.
const tg = await rows(`SELECT t.policy, count(*)::BIGINT AS n,
    sum(t.allocated_gpus * s.covered_s)::DOUBLE / 3600 AS gpu_h
  FROM read_parquet(${q('tenants.parquet')}) t
  JOIN read_parquet(${q('timeseries.parquet')}) s ON s.policy = t.policy AND s.bucket_start_s = t.bucket_start_s
  GROUP BY t.policy ORDER BY t.policy`);
const [{ n: tenantRows }] = await rows(`SELECT count(*)::BIGINT AS n FROM read_parquet(${q('tenants.parquet')})`);
if (tg.reduce((a, r) => a + r.n, 0n) !== tenantRows) fail(`tenants.parquet: some rows match no timeseries.parquet bucket`);
for (const s of summary) {
  const r = tg.find((x) => x.policy === s.policy);
  if (!r) {
    fail(`tenants.parquet lacks policy ${s.policy}`);
    continue;
  }
  console.log(`${s.policy}: ${r.n} tenant rows, Σ allocated_gpus × covered_s ${r.gpu_h.toFixed(6)} GPU-h (summary.json ${s.gpu_hours_allocated.toFixed(6)})`);
  if (!near(r.gpu_h, s.gpu_hours_allocated, 1e-9)) fail(`${s.policy}: ${r.gpu_h} GPU-hours from tenants.parquet, summary.json gpu_hours_allocated ${s.gpu_hours_allocated}`);
}
const bad = await rows(`SELECT t.policy, t.bucket_start_s, sum(t.allocated_gpus)::DOUBLE AS tenants, any_value(s.allocated_gpus)::DOUBLE AS bucket
  FROM read_parquet(${q('tenants.parquet')}) t
  JOIN read_parquet(${q('timeseries.parquet')}) s ON s.policy = t.policy AND s.bucket_start_s = t.bucket_start_s
  GROUP BY t.policy, t.bucket_start_s
  HAVING abs(sum(t.allocated_gpus) - any_value(s.allocated_gpus)) > 1e-9 * greatest(1, any_value(s.allocated_gpus))`);
for (const b of bad) fail(`${b.policy} bucket ${b.bucket_start_s}: tenants hold ${b.tenants} GPUs, timeseries.parquet ${b.bucket}`);

// Failure reasons (docs/results.md#failure-reasons): a failed job, and
// only a failed job, has a reason of the vocabulary; jobs.parquet and
// jobs.csv agree on them; every attempt ended in a word of the vocabulary,
// with an integer exit_code (-1: unknown or not applicable).
const jobReasons = ['retries_exhausted', 'deadline', 'dependency_failed', 'unsatisfiable'];
const attemptEnds = ['succeeded', 'failed', 'preempted', 'hardware_failure', 'running'];
const inList = (xs) => xs.map((x) => `'${x}'`).join(', ');
const reasonCounts = (from) => `SELECT policy, coalesce(reason, '') AS reason, count(*)::BIGINT AS n
  FROM ${from} GROUP BY ALL ORDER BY ALL`;
const pr = await rows(reasonCounts(`read_parquet(${q('jobs.parquet')})`));
const cr = await rows(reasonCounts(`read_csv(${q('jobs.csv')}, header = true, all_varchar = true)`));
const show = (rs) => rs.map((r) => `${r.policy}/${r.reason || '-'}: ${r.n}`).join(', ');
console.log(`jobs by reason: ${show(pr)}`);
if (show(pr) !== show(cr)) fail(`reasons: jobs.parquet ${show(pr)}; jobs.csv ${show(cr)}`);
const badReasons = await rows(`SELECT policy, id, state, reason FROM read_parquet(${q('jobs.parquet')})
  WHERE (state = 'failed') != (reason <> '') OR (reason <> '' AND reason NOT IN (${inList(jobReasons)})) LIMIT 5`);
for (const b of badReasons) fail(`${b.policy} job ${b.id}: state ${b.state} with reason '${b.reason}'`);
const badEnds = await rows(`SELECT policy, id, attempt, ended, typeof(exit_code) AS t FROM read_parquet(${q('attempts.parquet')})
  WHERE ended NOT IN (${inList(attemptEnds)}) OR typeof(exit_code) <> 'INTEGER' LIMIT 5`);
for (const b of badEnds) fail(`${b.policy} job ${b.id} attempt ${b.attempt}: ended '${b.ended}', exit_code ${b.t}`);

// The request and dependency columns (schema version 4): cpu_milli and
// memory_mib are BIGINT and deps VARCHAR in jobs.parquet; their per-policy
// sums and deps agree with jobs.csv; every name in deps (joined by ';') is
// a job of the same policy.
const types = await rows(`SELECT column_name AS c, column_type AS t FROM (DESCRIBE SELECT * FROM read_parquet(${q('jobs.parquet')}))
  WHERE column_name IN ('cpu_milli', 'memory_mib', 'deps') ORDER BY column_name`);
const wantTypes = 'cpu_milli BIGINT, deps VARCHAR, memory_mib BIGINT';
if (types.map((r) => `${r.c} ${r.t}`).join(', ') !== wantTypes) {
  fail(`jobs.parquet request columns: ${types.map((r) => `${r.c} ${r.t}`).join(', ')}, want ${wantTypes}`);
}
const reqSums = (from) => `SELECT policy, sum(cpu_milli::BIGINT)::BIGINT AS cpu, sum(memory_mib::BIGINT)::BIGINT AS mem,
    count(*) FILTER (WHERE coalesce(deps, '') <> '')::BIGINT AS with_deps,
    coalesce(string_agg(deps, '|' ORDER BY id::INTEGER) FILTER (WHERE coalesce(deps, '') <> ''), '') AS deps
  FROM ${from} GROUP BY policy ORDER BY policy`;
const pq = await rows(reqSums(`read_parquet(${q('jobs.parquet')})`));
const cq = await rows(reqSums(`read_csv(${q('jobs.csv')}, header = true, all_varchar = true)`));
for (const p of pq) {
  const c = cq.find((r) => r.policy === p.policy);
  console.log(`${p.policy}: Σcpu_milli ${p.cpu}, Σmemory_mib ${p.mem}, ${p.with_deps} jobs with deps`);
  if (!c) continue;
  for (const k of ['cpu', 'mem', 'with_deps', 'deps']) {
    if (p[k] !== c[k]) fail(`${p.policy} ${k}: jobs.parquet ${p[k]}, jobs.csv ${c[k]}`);
  }
}
const badDeps = await rows(`WITH j AS (SELECT * FROM read_parquet(${q('jobs.parquet')})),
    d AS (SELECT policy, id, name, unnest(string_split(deps, ';')) AS dep FROM j WHERE deps <> '')
  SELECT d.policy, d.name, d.dep FROM d ANTI JOIN j ON j.policy = d.policy AND j.name = d.dep LIMIT 5`);
for (const b of badDeps) fail(`${b.policy} job ${b.name}: deps names ${b.dep}, no job of the policy`);

if (failures.length > 0) {
  console.error(`duckdb-check: FAILED, ${failures.length} mismatches:`);
  for (const f of failures) console.error(`  ${f}`);
  process.exit(1);
}
console.log(`duckdb-check: DuckDB read ${parquets.length} Parquet files in ${dir}; row counts and sums match the CSV twins and summary.json`);

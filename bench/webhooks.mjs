#!/usr/bin/env node
// npm run bench:webhooks [-- --requests 2000 --concurrency 32 --rounds 20 --warmup 200 --keep]
//
// Starts the coordinator with `wrangler dev` on a free loopback port and a fresh local state
// directory, in one workerd with a floor worker (HMAC check + one D1 insert, bench/floor-worker.ts)
// and a front router (bench/router-worker.ts) that gives both the same single hop. Registers a
// repository and a scale set through the admin API, then sends signed workflow_job deliveries
// (GitHub's example payloads: queued, in_progress, completed per job) at fixed concurrency to
// both routes in alternating rounds, and prints one JSON document.

import { spawn } from "node:child_process";
import { createHmac, randomBytes, randomUUID } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { applyLocalMigrations, freePort, freshJobTimes, note, processGroupCpu, sleep, startCpuProfile } from "./harness.mjs";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const require = createRequire(import.meta.url);

function flags(argv) {
  const out = { requests: 2000, concurrency: 32, rounds: 20, warmup: 200, keep: false, cpuProfile: null };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--keep") out.keep = true;
    else if (a === "--cpu-profile") out.cpuProfile = resolve(argv[++i]);
    else if (a.startsWith("--") && a.slice(2) in out) out[a.slice(2)] = Number(argv[++i]);
    else throw new Error(`unknown flag ${a}`);
  }
  for (const k of ["requests", "concurrency", "rounds", "warmup"]) {
    if (!Number.isInteger(out[k]) || out[k] < (k === "warmup" ? 0 : 1)) throw new Error(`--${k} must be a positive integer`);
  }
  return out;
}

const opts = flags(process.argv.slice(2));

// The floor's secret is in bench/floor.wrangler.toml; the coordinator's entity uses the same.
const SECRET = /WEBHOOK_SECRET = "([^"]+)"/.exec(readFileSync(join(root, "bench/floor.wrangler.toml"), "utf8"))[1];
const ADMIN_TOKEN = randomBytes(24).toString("hex");
const ENCRYPTION_KEY = randomBytes(32).toString("base64");

const work = mkdtempSync(join(tmpdir(), "edgerunner-webhooks-bench-"));
const state = join(work, "state");
// The coordinator's config, copied so its secrets come from a .dev.vars of our own and the
// developer's .dev.vars and .wrangler/state stay untouched.
const config = readFileSync(join(root, "wrangler.toml"), "utf8")
  .replace(/^main = "([^"]+)"/m, (_, p) => `main = ${JSON.stringify(join(root, p))}`)
  .replace(/^migrations_dir = "([^"]+)"/m, (_, p) => `migrations_dir = ${JSON.stringify(join(root, p))}`);
writeFileSync(join(work, "wrangler.toml"), config);
// Reconciliation is held off (an hour away): the bench measures intake, and the objects must
// not call out to GitHub or a cloud, which are not there. Nudges are still made and measured.
writeFileSync(
  join(work, ".dev.vars"),
  [
    `ADMIN_TOKEN=${ADMIN_TOKEN}`,
    `ENCRYPTION_KEY=${ENCRYPTION_KEY}`,
    `INSTANCE_TOKEN_SECRET=${randomBytes(24).toString("hex")}`,
    "NUDGE_DELAY_SECONDS=3600",
    "RECONCILE_INTERVAL_SECONDS=3600",
    // BENCH_LOG_LEVEL=warn measures intake without its per-delivery info line (issue 14: where the time goes).
    ...(process.env.BENCH_LOG_LEVEL ? [`LOG_LEVEL=${process.env.BENCH_LOG_LEVEL}`] : []),
    "",
  ].join("\n"),
);

// Run wrangler on this script's Node (the project's Node 22), whatever `node` is on PATH.
const wranglerJs = join(root, "node_modules/wrangler/bin/wrangler.js");
const childEnv = { ...process.env, CI: "true", WRANGLER_SEND_METRICS: "false", NO_COLOR: "1" };
let dev;

function cleanup() {
  if (dev && dev.exitCode === null) {
    try {
      process.kill(-dev.pid, "SIGTERM");
    } catch {
      // already gone
    }
  }
  if (!opts.keep) rmSync(work, { recursive: true, force: true });
}
process.on("SIGINT", () => {
  cleanup();
  process.exit(130);
});

async function main() {
  note(`state in ${work}`);
  applyLocalMigrations(join(work, "wrangler.toml"), state, { cwd: root, env: childEnv });

  const port = await freePort();
  const inspector = await freePort();
  const log = join(work, "wrangler-dev.log");
  const args = [
    wranglerJs,
    "dev",
    "-c",
    join(root, "bench/router.wrangler.toml"),
    "-c",
    join(work, "wrangler.toml"),
    "-c",
    join(root, "bench/floor.wrangler.toml"),
    "--ip",
    "127.0.0.1",
    "--port",
    String(port),
    "--inspector-port",
    String(inspector),
    "--persist-to",
    state,
    "--show-interactive-dev-session=false",
    "--log-level",
    "warn",
  ];
  const { openSync } = await import("node:fs");
  const fd = openSync(log, "a");
  dev = spawn(process.execPath, args, { cwd: root, env: childEnv, detached: true, stdio: ["ignore", fd, fd] });
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    try {
      const r = await fetch(`${base}/healthz`);
      if (r.ok) break;
    } catch {
      // not up yet
    }
    if (dev.exitCode !== null || i > 240)
      throw new Error(`wrangler dev did not start; see ${log}\n${readFileSync(log, "utf8").slice(-3000)}`);
    await sleep(250);
  }
  note(`coordinator and floor up at ${base}`);

  const admin = async (path, body) => {
    const r = await fetch(`${base}/api/v1${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const json = await r.json();
    if (r.status !== 201) throw new Error(`POST ${path}: ${r.status} ${JSON.stringify(json)}`);
    return json;
  };
  await admin("/github/credentials", { name: "bench", auth_type: "pat", pat: { oauth2_token: "ghp_bench" } });
  await admin("/providers", { name: "bench", url: "http://127.0.0.1:9", secret: "bench-provider-secret-0123456789" });
  const repo = await admin("/repositories", { owner: "bench-org", name: "bench-repo", credentials_name: "bench", webhook_secret: SECRET });
  const scaleSet = await admin(`/repositories/${repo.id}/scalesets`, {
    name: "bench",
    provider_name: "bench",
    labels: ["self-hosted", "linux", "bench"],
    max_runners: 100,
    image: "ubuntu:24.04",
    flavor: "small",
  });

  // GitHub's own payloads for one job's life, moved to the bench repository.
  const examples = require("@octokit/webhooks-examples/api.github.com/index.json").find((d) => d.name === "workflow_job").examples;
  const lifecycle = ["queued", "in_progress", "completed"].map((action) => {
    const p = structuredClone(examples.find((e) => e.action === action && e.workflow_job.id === 289782451));
    p.repository.owner.login = "bench-org";
    p.repository.name = "bench-repo";
    p.repository.full_name = "bench-org/bench-repo";
    p.workflow_job.labels = ["self-hosted", "linux", "bench"];
    return freshJobTimes(p);
  });
  let nextJob = 10_000_000;
  /** What the coordinator was told, per job id: the furthest status sent. */
  const told = new Map();
  /** n deliveries: whole job lifecycles in order, each job with a fresh id. */
  function deliveries(n, forCoordinator) {
    const out = [];
    while (out.length < n) {
      const id = nextJob++;
      for (const p of lifecycle) {
        if (out.length === n) break;
        if (forCoordinator) told.set(id, p.workflow_job.status);
        const body = JSON.stringify({ ...p, workflow_job: { ...p.workflow_job, id } });
        out.push({ body, signature: `sha256=${createHmac("sha256", SECRET).update(body).digest("hex")}` });
      }
    }
    return out;
  }

  async function run(path, batch) {
    const latencies = [];
    const statuses = {};
    let next = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: Math.min(opts.concurrency, batch.length) }, async () => {
        while (next < batch.length) {
          const d = batch[next++];
          const t0 = performance.now();
          let status = 0;
          try {
            const r = await fetch(`${base}${path}`, {
              method: "POST",
              headers: {
                "content-type": "application/json",
                "x-github-event": "workflow_job",
                "x-github-delivery": randomUUID(),
                "x-hub-signature-256": d.signature,
              },
              body: d.body,
            });
            await r.arrayBuffer();
            status = r.status;
          } catch {
            status = 0;
          }
          latencies.push(performance.now() - t0);
          statuses[status] = (statuses[status] ?? 0) + 1;
        }
      }),
    );
    return { latencies, statuses, seconds: (performance.now() - started) / 1000 };
  }

  const routes = { edgerunner: "/webhooks/github", floor: "/floor/webhook" };
  if (opts.warmup > 0) {
    for (const [name, path] of Object.entries(routes)) await run(path, deliveries(opts.warmup, name === "edgerunner"));
    note(`warmed up with ${opts.warmup} deliveries per route`);
  }

  // --cpu-profile FILE: a V8 CPU profile of the coordinator's isolate over the measured rounds
  // (its Worker and its Durable Objects), taken through wrangler dev's inspector; open it in
  // Chrome DevTools or summarize it with `node bench/profile-summary.mjs FILE`.
  const profiler = opts.cpuProfile ? await startCpuProfile(inspector) : null;

  const totals = {
    edgerunner: { latencies: [], statuses: {}, seconds: 0, cpu: { workerd: 0, wrangler: 0 } },
    floor: { latencies: [], statuses: {}, seconds: 0, cpu: { workerd: 0, wrangler: 0 } },
  };
  // Short alternating rounds: on a shared machine, both routes see the same background load.
  const roundRatios = [];
  const perRound = Math.ceil(opts.requests / opts.rounds);
  let sent = 0;
  for (let round = 0; sent < opts.requests; round++) {
    const n = Math.min(perRound, opts.requests - sent);
    const order = round % 2 === 0 ? ["floor", "edgerunner"] : ["edgerunner", "floor"];
    const rps = {};
    for (const name of order) {
      const batch = deliveries(n, name === "edgerunner");
      // CPU the processes under wrangler dev used for this round: unlike time, hardly moved by
      // other load on the machine (the router's share is the same for both routes).
      const cpu0 = processGroupCpu(dev.pid);
      const r = await run(routes[name], batch);
      const cpu1 = processGroupCpu(dev.pid);
      if (cpu0 && cpu1) for (const k of ["workerd", "wrangler"]) totals[name].cpu[k] += cpu1[k] - cpu0[k];
      rps[name] = r.latencies.length / r.seconds;
      totals[name].latencies.push(...r.latencies);
      totals[name].seconds += r.seconds;
      for (const [s, c] of Object.entries(r.statuses)) totals[name].statuses[s] = (totals[name].statuses[s] ?? 0) + c;
    }
    roundRatios.push(rps.floor / rps.edgerunner);
    sent += n;
    note(`round ${round + 1}: ${sent}/${opts.requests}, throughput ratio ${(rps.floor / rps.edgerunner).toFixed(2)}`);
  }

  if (profiler) {
    const { profile, source } = await profiler.stop();
    writeFileSync(opts.cpuProfile, JSON.stringify(profile));
    if (source) writeFileSync(`${opts.cpuProfile}.index.js`, source);
    note(`CPU profile written to ${opts.cpuProfile} (its bundle: ${opts.cpuProfile}.index.js)`);
  }

  const summary = (t) => {
    const sorted = [...t.latencies].sort((a, b) => a - b);
    const q = (p) => sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)];
    const ok = Object.entries(t.statuses)
      .filter(([s]) => s.startsWith("2"))
      .reduce((n, [, c]) => n + c, 0);
    return {
      throughput_rps: round1(sorted.length / t.seconds),
      p50_ms: round2(q(0.5)),
      p99_ms: round2(q(0.99)),
      mean_ms: round2(sorted.reduce((a, b) => a + b, 0) / sorted.length),
      ok,
      errors: sorted.length - ok,
      statuses: t.statuses,
      cpu_ms_per_request: {
        workerd: round2((t.cpu.workerd * 1000) / sorted.length),
        wrangler_dev_proxy: round2((t.cpu.wrangler * 1000) / sorted.length),
      },
    };
  };
  const ours = summary(totals.edgerunner);
  const floor = summary(totals.floor);

  // What the run left in D1, read back through the admin API: every job the coordinator was
  // told about is there, routed to the bench scale set, in the furthest state it was sent.
  const stored = new Map();
  for (let cursor = null; ; ) {
    const page = await fetch(`${base}/api/v1/jobs?scaleset_id=${scaleSet.id}&limit=500${cursor ? `&cursor=${cursor}` : ""}`, {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    }).then((r) => r.json());
    for (const j of page.jobs) stored.set(j.id, j.status);
    if (!page.next_cursor) break;
    cursor = page.next_cursor;
  }
  const wrong = [...told].filter(([id, status]) => stored.get(id) !== status).length;

  const ratio = {
    throughput: round2(floor.throughput_rps / ours.throughput_rps),
    p50: round2(ours.p50_ms / floor.p50_ms),
    p99: round2(ours.p99_ms / floor.p99_ms),
    // workerd's CPU per request (the router's included in both): what a loaded machine moves least.
    cpu_workerd: round2(ours.cpu_ms_per_request.workerd / floor.cpu_ms_per_request.workerd),
  };
  const result = {
    benchmark: "webhook intake",
    requests_per_route: opts.requests,
    concurrency: opts.concurrency,
    rounds: opts.rounds,
    warmup_per_route: opts.warmup,
    payload_bytes: lifecycle.map((p) => JSON.stringify(p).length),
    edgerunner: { route: `POST ${routes.edgerunner}`, ...ours },
    floor: { route: "HMAC verify + one D1 insert (bench/floor-worker.ts)", ...floor },
    ratio_vs_floor: ratio,
    throughput_ratio_per_round: {
      median: round2(median(roundRatios)),
      min: round2(Math.min(...roundRatios)),
      max: round2(Math.max(...roundRatios)),
    },
    target: "throughput and p50 ratios ≤ 1.25 (issue 14)",
    within_target: ratio.throughput <= 1.25 && ratio.p50 <= 1.25,
    check: { jobs_sent: told.size, jobs_stored_routed_in_final_state: told.size - wrong, mismatched: wrong },
    environment: { node: process.version, cpus: (await import("node:os")).cpus().length, wrangler_dev: "local workerd, local D1" },
  };
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}
function round1(x) {
  return Math.round(x * 10) / 10;
}
function round2(x) {
  return Math.round(x * 100) / 100;
}

main()
  .catch((err) => {
    process.stderr.write(`bench failed: ${err.stack ?? err}\n`);
    process.exitCode = 1;
  })
  .finally(cleanup);

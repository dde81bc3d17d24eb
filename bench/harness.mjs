// Shared plumbing for the benchmark scripts: free ports, the fakes as child processes, and the
// coordinator under `wrangler dev` with its own config copy, secrets and state directory, so a
// developer's .dev.vars and .wrangler/state are never touched. Loopback only. What a benchmark
// sets up at a coordinator it started (a repository on the fake GitHub, a shim) is harness-world.mjs.

import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
export const note = (msg) => process.stderr.write(`bench: ${msg}\n`);
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Applies the D1 migrations of a wrangler config to a local state directory (throws with wrangler's output if they fail). */
export function applyLocalMigrations(configPath, state, { cwd, env }) {
  const migrate = spawnSync(
    process.execPath,
    [
      join(root, "node_modules/wrangler/bin/wrangler.js"),
      "d1",
      "migrations",
      "apply",
      "DB",
      "--local",
      "--persist-to",
      state,
      "-c",
      configPath,
    ],
    { cwd, env, encoding: "utf8" },
  );
  if (migrate.status !== 0) throw new Error(`migrations failed:\n${migrate.stdout}\n${migrate.stderr}`);
}

/** Listens on `port` (0: one the system picks) and closes again: the port, or null if it was taken. */
function tryPort(port) {
  return new Promise((res, rej) => {
    const s = createServer();
    s.once("error", (err) => (port && err.code === "EADDRINUSE" ? res(null) : rej(err)));
    s.listen(port, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => res(port));
    });
  });
}

/** Every port freePort handed out in this process: never handed out twice. */
const handedOut = new Set();

/**
 * A loopback port nothing listens on, for a server about to start there. A port is handed out
 * once per process: the coordinator killed and started again on its port (a restart, an outage)
 * leaves it free meanwhile, and it must still be its own when it comes back.
 *
 * With E2E_PORT_RANGE=from-to (a parallel end-to-end run gives each of its scenarios a range of
 * its own, e2e/parallel.ts), the port comes from that range, which lies below the system's
 * ephemeral ports: no port the system hands out (a listener on port 0, an outgoing connection)
 * and no other scenario can take it while its server is down. Else the system picks it.
 */
export async function freePort() {
  const range = process.env.E2E_PORT_RANGE?.match(/^(\d+)-(\d+)$/);
  if (!range) {
    for (;;) {
      const port = await tryPort(0);
      if (!handedOut.has(port)) {
        handedOut.add(port);
        return port;
      }
    }
  }
  const [from, to] = [Number(range[1]), Number(range[2])];
  // From a random place in the range: the scenario before this one in its range may have just let its ports go.
  const size = to - from + 1;
  const start = Math.floor(Math.random() * size);
  for (let i = 0; i < size; i++) {
    const port = from + ((start + i) % size);
    if (handedOut.has(port) || (await tryPort(port)) === null) continue;
    handedOut.add(port);
    return port;
  }
  throw new Error(`no free port left in E2E_PORT_RANGE ${from}-${to}`);
}

/**
 * GitHub's example payloads describe jobs of 2021; the coordinator refuses to create rows for jobs
 * older than RETENTION_DAYS (a replay). Moves the job's times to now, keeping their gaps.
 */
export function freshJobTimes(payload, now = Date.now()) {
  const j = payload.workflow_job;
  const base = Date.parse(j.created_at);
  if (!Number.isFinite(base)) return payload;
  for (const key of ["created_at", "started_at", "completed_at"]) {
    const t = Date.parse(j[key]);
    if (Number.isFinite(t)) j[key] = new Date(now + (t - base)).toISOString();
  }
  return payload;
}

export function percentile(sorted, p) {
  if (!sorted.length) return null;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return Math.round(sorted[i] * 100) / 100;
}

export function summarize(samples) {
  const s = [...samples].sort((a, b) => a - b);
  return {
    n: s.length,
    p50_ms: percentile(s, 50),
    p99_ms: percentile(s, 99),
    max_ms: s.length ? Math.round(s[s.length - 1] * 100) / 100 : null,
  };
}

/** Starts a Node script of ours and resolves with its first JSON line on stdout. */
export function startNodeScript(script, args = []) {
  const proc = spawn(process.execPath, ["--experimental-strip-types", "--no-warnings", join(root, script), ...args], {
    cwd: root,
    stdio: ["ignore", "pipe", "inherit"],
  });
  return new Promise((res, rej) => {
    let buf = "";
    proc.stdout.on("data", (d) => {
      buf += d;
      const nl = buf.indexOf("\n");
      if (nl >= 0) {
        try {
          res({ proc, info: JSON.parse(buf.slice(0, nl)) });
        } catch (e) {
          rej(e);
        }
      }
    });
    proc.once("exit", (code) => rej(new Error(`${script} exited with ${code}`)));
  });
}

/**
 * The coordinator under `wrangler dev` on a free port, with fresh local D1 and Durable Objects.
 * `vars` become .dev.vars entries (timing knobs and the like).
 */
export async function startCoordinator(vars = {}, opts = {}) {
  const work = mkdtempSync(join(tmpdir(), "edgerunner-bench-"));
  const state = join(work, "state");
  const port = await freePort();
  const adminToken = randomBytes(24).toString("hex");
  const config = readFileSync(join(root, "wrangler.toml"), "utf8")
    .replace(/^main = "([^"]+)"/m, (_, p) => `main = ${JSON.stringify(join(root, p))}`)
    .replace(/^migrations_dir = "([^"]+)"/m, (_, p) => `migrations_dir = ${JSON.stringify(join(root, p))}`)
    .replace(/^PUBLIC_URL = .*$/m, `PUBLIC_URL = "http://127.0.0.1:${port}"`);
  const configPath = join(work, "wrangler.toml");
  writeFileSync(configPath, config);
  const devVars = {
    ADMIN_TOKEN: adminToken,
    ENCRYPTION_KEY: randomBytes(32).toString("base64"),
    INSTANCE_TOKEN_SECRET: randomBytes(24).toString("hex"),
    // Loopback fakes limit nothing, so no GitHub budget either (the production profile sets one).
    GITHUB_POINTS_PER_MINUTE: "0",
    ...vars,
  };
  writeFileSync(
    join(work, ".dev.vars"),
    Object.entries(devVars)
      .map(([k, v]) => `${k}=${v}`)
      .join("\n") + "\n",
  );

  const wrangler = join(root, "node_modules/wrangler/bin/wrangler.js");
  const env = {
    ...process.env,
    CI: "true",
    WRANGLER_SEND_METRICS: "false",
    // opts.localObservability false: without wrangler dev's local observability, which streams
    // every invocation's logs and spans to a collector Worker in the coordinator's own workerd
    // (its local explorer): CPU that is wrangler's, not the Worker's (docs/performance.md).
    ...(opts.localObservability === false ? { X_LOCAL_OBSERVABILITY: "false" } : {}),
  };
  applyLocalMigrations(configPath, state, { cwd: work, env });

  // Always a port of our own for wrangler's inspector proxy: its default (9229) is the same for
  // every wrangler dev, and two started at once both find it free and one fails to bind it.
  const inspectorPort = opts.inspectorPort ?? (await freePort());
  // Its own process group, so killing it takes wrangler's workerd along (nothing left holding the port).
  let proc;
  const launch = async () => {
    proc = spawn(
      process.execPath,
      [
        wrangler,
        "dev",
        "-c",
        configPath,
        "--ip",
        "127.0.0.1",
        "--port",
        String(port),
        "--persist-to",
        state,
        "--log-level",
        opts.log ? "log" : "error",
        // The DevTools protocol of the Worker's isolate (opts.inspectorPort: bench/cpu-profile.ts).
        "--inspector-port",
        String(inspectorPort),
      ],
      {
        cwd: work,
        env,
        // opts.log: a file that gets the coordinator's log lines (appended across restarts).
        stdio: ["ignore", opts.log ? openSync(opts.log, "a") : "ignore", "inherit"],
        detached: true,
      },
    );
    for (let i = 0; ; i++) {
      try {
        if ((await fetch(`${url}/healthz`)).ok) break;
      } catch {
        // not up yet
      }
      if (i > 600) throw new Error("wrangler dev did not start within 60 s");
      await sleep(100);
    }
  };
  const killGroup = async (signal) => {
    const p = proc;
    if (!p || p.exitCode !== null || p.signalCode !== null) return;
    const exited = new Promise((r) => p.once("exit", r));
    try {
      process.kill(-p.pid, signal);
    } catch {
      // already gone
    }
    await Promise.race([exited, sleep(5000)]);
  };
  const url = `http://127.0.0.1:${port}`;
  await launch();

  const api = async (method, path, body) => {
    const res = await fetch(`${url}/api/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${adminToken}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
    return text ? JSON.parse(text) : null;
  };

  /** Runs SQL against the coordinator's local D1 (same state directory). */
  const sql = (file) => {
    const r = spawnSync(
      process.execPath,
      [wrangler, "d1", "execute", "DB", "--local", "--persist-to", state, "-c", configPath, "--file", file, "--yes"],
      {
        cwd: work,
        env,
        encoding: "utf8",
      },
    );
    if (r.status !== 0) throw new Error(`d1 execute failed: ${r.stderr || r.stdout}`);
  };

  const stop = async () => {
    await killGroup("SIGTERM");
    await sleep(300);
    rmSync(work, { recursive: true, force: true });
  };
  /** Kills the coordinator outright (SIGKILL, no shutdown) and starts it again on the same port and persisted state. */
  const restart = async () => {
    await killGroup("SIGKILL");
    await launch();
  };
  /**
   * Kills the coordinator (SIGKILL) and keeps it down for `ms` before starting it again on the same
   * port and persisted state: for that long nothing reaches it (GitHub's deliveries fail, machines'
   * calls are refused) and nothing of it runs; `during` runs once it is down (a burst queued
   * meanwhile). Resolves once it answers again.
   */
  const outage = async (ms, during = async () => {}) => {
    const down = Date.now();
    await killGroup("SIGKILL");
    await during();
    await sleep(Math.max(0, down + ms - Date.now()));
    await launch();
  };
  /** Kills it for good, leaving the state directory (for a synchronous exit handler: best effort). */
  const killNow = () => {
    try {
      if (proc && proc.exitCode === null) process.kill(-proc.pid, "SIGKILL");
    } catch {
      // already gone
    }
  };
  /**
   * CPU seconds (user + system) used so far by the coordinator's processes, from /proc (Linux):
   * `workerd` (the Worker itself: every request, alarm and object) and `wrangler` (the dev proxy
   * in front of it). Null where /proc is not there.
   */
  const cpuSeconds = () => (proc ? processGroupCpu(proc.pid) : null);
  /** wrangler dev's process group, which its workerd shares (bench/perf-split.ts finds it there). */
  const processGroup = () => proc?.pid ?? null;
  return {
    url,
    port,
    api,
    sql,
    work,
    stop,
    restart,
    outage,
    killNow,
    devVars,
    cpuSeconds,
    processGroup,
    inspectorPort,
  };
}

/**
 * User + system CPU seconds of a process group's processes, split into workerd and the rest, and
 * which workerd processes there were (wrangler dev restarts workerd when a source file changes,
 * and a new process counts from zero); null without /proc.
 */
export function processGroupCpu(pgid) {
  let entries;
  try {
    entries = readdirSync("/proc");
  } catch {
    return null;
  }
  const ticksPerSecond = 100; // USER_HZ on Linux
  const out = { workerd: 0, wrangler: 0, workerdPids: [] };
  for (const pid of entries) {
    if (!/^\d+$/.test(pid)) continue;
    let stat;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    } catch {
      continue; // gone meanwhile
    }
    // "pid (comm) state ppid pgrp …": comm may hold spaces, so split after its closing parenthesis.
    const close = stat.lastIndexOf(")");
    const comm = stat.slice(stat.indexOf("(") + 1, close);
    const fields = stat.slice(close + 2).split(" ");
    if (Number(fields[2]) !== pgid) continue;
    const seconds = (Number(fields[11]) + Number(fields[12])) / ticksPerSecond;
    if (comm.startsWith("workerd")) {
      out.workerd += seconds;
      out.workerdPids.push(Number(pid));
    } else out.wrangler += seconds;
  }
  return out;
}

/** Starts V8's sampling profiler in the coordinator's isolate, through wrangler dev's inspector proxy. */
export async function startCpuProfile(port) {
  const targets = await fetch(`http://127.0.0.1:${port}/json`).then((r) => r.json());
  note(`inspector targets: ${JSON.stringify(targets)}`);
  const target = targets.find((t) => /edgerunner/.test(t.title) && !/bench/.test(t.title)) ?? targets[0];
  // The proxy only takes loopback origins (a devtools frontend would send its own).
  const ws = new WebSocket(target.webSocketDebuggerUrl, { headers: { origin: "http://localhost" } });
  await new Promise((res, rej) => {
    ws.onopen = res;
    ws.onerror = (e) => rej(new Error(`inspector: ${e.message ?? e.error ?? "websocket error"}`));
  });
  let next = 1;
  const waiting = new Map();
  ws.onmessage = (m) => {
    const msg = JSON.parse(typeof m.data === "string" ? m.data : m.data.toString());
    if (msg.id && waiting.has(msg.id)) {
      waiting.get(msg.id)(msg);
      waiting.delete(msg.id);
    }
  };
  const send = (method, params = {}) =>
    new Promise((res) => {
      const id = next++;
      waiting.set(id, res);
      ws.send(JSON.stringify({ id, method, params }));
    });
  await send("Profiler.enable");
  await send("Profiler.setSamplingInterval", { interval: 200 });
  await send("Profiler.start");
  return {
    /** The profile, and the bundled source its line numbers refer to. */
    async stop() {
      const profile = (await send("Profiler.stop")).result?.profile;
      const scriptId = profile?.nodes.find((n) => n.callFrame.url === "index.js")?.callFrame.scriptId;
      await send("Debugger.enable");
      const source = scriptId ? (await send("Debugger.getScriptSource", { scriptId })).result?.scriptSource : undefined;
      ws.close();
      return { profile, source };
    },
  };
}

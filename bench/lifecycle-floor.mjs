#!/usr/bin/env node
// npm run bench:floor [-- --runners 1000 --concurrency 50 --warmup 50 --rate 0]
//
// The floor under `coordinator_cpu_ms_per_runner` (bench:workflows): what wrangler dev's workerd
// spends on a runner's life when the Worker does only the least each request needs
// (bench/floor-worker.ts, `/floor/lifecycle/…`). Per runner, the requests the coordinator serves
// for one (the simulator's, e2e/stack.ts), each with its check and one D1 round trip:
//   1. the `queued` delivery: HMAC, the delivery and the instance written (one batch), the shim's create;
//   2. the machine's bootstrap: runner-metadata, a status report, the three credentials files
//      (the first mints its JIT config: one call to GitHub and a write), two more status reports
//      and its system info: eight requests, each checking its bearer token (HMAC);
//   3. the `in_progress` delivery; the `completed` one, with the shim's delete and a write.
// The shim and GitHub are one loopback server here that answers at once. Local observability is
// off and nothing is logged, as in bench:workflows' default. Prints one JSON document.
//
// `--rate R` starts R lifecycles a second, whatever is under way (open loop), instead of keeping
// `--concurrency` going back to back: the pace of a production burst, whose runners come as
// GitHub's budget mints them (~2.5 a second on one credential). A process woken by a trickle of
// requests pays its per-wake costs (the event loop, the isolate's lock, the microtask
// checkpoint) for each one, where a saturated one shares them; so a burst paced like that is
// read against a floor at the same pace (docs/performance.md, "Coordinator CPU per runner").

import { spawn } from "node:child_process";
import { createHmac, randomBytes, randomUUID } from "node:crypto";
import { mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { applyLocalMigrations, freePort, freshJobTimes, note, processGroupCpu, root, sleep } from "./harness.mjs";

const require = createRequire(import.meta.url);

function flags(argv) {
  const out = { runners: 1000, concurrency: 50, warmup: 50, rate: 0 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a.startsWith("--") && a.slice(2) in out) out[a.slice(2)] = Number(argv[++i]);
    else throw new Error(`unknown flag ${a} (--runners, --concurrency, --warmup, --rate)`);
  }
  for (const k of Object.keys(out)) {
    if (k === "rate") {
      if (!Number.isFinite(out.rate) || out.rate < 0)
        throw new Error("--rate must be a number of lifecycles a second ≥ 0 (0: back to back)");
    } else if (!Number.isInteger(out[k]) || out[k] < (k === "warmup" ? 0 : 1)) throw new Error(`--${k} must be a positive integer`);
  }
  return out;
}
const opts = flags(process.argv.slice(2));

// The shim and GitHub at once: creates, deletes and JIT configs answered without delay.
let outbound = 0;
const fake = createServer((req, res) => {
  outbound++;
  req.resume();
  req.on("end", () => {
    if (req.method === "DELETE") return res.writeHead(204).end();
    res.writeHead(200, { "content-type": "application/json" });
    res.end(
      req.url === "/jit"
        ? JSON.stringify({ runner: { id: 1 }, encoded_jit_config: randomBytes(2048).toString("base64") })
        : '{"provider_id":"m"}',
    );
  });
});
await new Promise((r) => fake.listen(0, "127.0.0.1", r));
const fakeUrl = `http://127.0.0.1:${fake.address().port}`;

const SECRET = /WEBHOOK_SECRET = "([^"]+)"/.exec(readFileSync(join(root, "bench/floor.wrangler.toml"), "utf8"))[1];
const work = mkdtempSync(join(tmpdir(), "edgerunner-floor-bench-"));
const state = join(work, "state");
const config = readFileSync(join(root, "bench/floor.wrangler.toml"), "utf8")
  .replace(/^main = "([^"]+)"/m, (_, p) => `main = ${JSON.stringify(join(root, "bench", p))}`)
  .replace(/^migrations_dir = "([^"]+)"/m, (_, p) => `migrations_dir = ${JSON.stringify(join(root, "bench", p))}`);
const configPath = join(work, "wrangler.toml");
writeFileSync(configPath, config);
const wranglerJs = join(root, "node_modules/wrangler/bin/wrangler.js");
// As bench:workflows runs the coordinator: without wrangler dev's local trace collector.
const env = { ...process.env, CI: "true", WRANGLER_SEND_METRICS: "false", X_LOCAL_OBSERVABILITY: "false" };
applyLocalMigrations(configPath, state, { cwd: work, env });

const port = await freePort();
const log = join(work, "wrangler-dev.log");
const dev = spawn(
  process.execPath,
  [
    ...[wranglerJs, "dev", "-c", configPath, "--ip", "127.0.0.1", "--port", String(port), "--persist-to", state],
    ...["--var", `SHIM_URL:${fakeUrl}`, "--log-level", "error", "--show-interactive-dev-session=false"],
  ],
  { cwd: work, env, detached: true, stdio: ["ignore", openSync(log, "a"), openSync(log, "a")] },
);
const stop = () => {
  try {
    process.kill(-dev.pid, "SIGKILL");
  } catch {
    // already gone
  }
};
process.once("exit", stop);
const base = `http://127.0.0.1:${port}/floor/lifecycle`;

try {
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`${base}/setup`, { method: "POST" })).ok) break;
    } catch {
      // not up yet
    }
    if (dev.exitCode !== null || i > 600)
      throw new Error(`wrangler dev did not start; see ${log}\n${readFileSync(log, "utf8").slice(-3000)}`);
    await sleep(100);
  }

  // GitHub's own payloads for one job's life, as bench:webhooks sends them.
  const examples = require("@octokit/webhooks-examples/api.github.com/index.json").find((d) => d.name === "workflow_job").examples;
  const payloads = ["queued", "in_progress", "completed"].map((action) =>
    freshJobTimes(structuredClone(examples.find((e) => e.action === action && e.workflow_job.id === 289782451))),
  );
  let nextJob = 20_000_000;
  let requests = 0;
  const send = async (url, init) => {
    requests++;
    const res = await fetch(url, init);
    await res.arrayBuffer();
    if (!res.ok) throw new Error(`${init.method ?? "GET"} ${url}: ${res.status}`);
  };
  const deliver = (runner, payload, id) => {
    const body = JSON.stringify({ ...payload, workflow_job: { ...payload.workflow_job, id, runner_name: runner } });
    return send(`${base}/webhook?runner=${runner}`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-github-event": "workflow_job",
        "x-github-delivery": randomUUID(),
        "x-hub-signature-256": `sha256=${createHmac("sha256", SECRET).update(body).digest("hex")}`,
      },
      body,
    });
  };
  async function lifecycle() {
    const id = nextJob++;
    const runner = `floor-${id}`;
    const token = { authorization: `Bearer ${runner}.${createHmac("sha256", SECRET).update(runner).digest("hex")}` };
    const machine = `${base}/machine`;
    const report = (status) =>
      send(machine, {
        method: "POST",
        headers: { ...token, "content-type": "application/json" },
        body: JSON.stringify({ status, message: status }),
      });
    await deliver(runner, payloads[0], id);
    await send(machine, { headers: token }); // runner-metadata
    await report("installing");
    await send(`${machine}?mint=1`, { headers: token }); // credentials/runner: the JIT config minted
    await send(machine, { headers: token }); // credentials/credentials
    await send(machine, { headers: token }); // credentials/credentials_rsaparams
    await report("configuring");
    await report("system-info");
    await report("idle");
    await deliver(runner, payloads[1], id);
    await deliver(runner, payloads[2], id);
  }
  const run = async (n) => {
    if (opts.rate > 0) {
      const started = [];
      const t0 = performance.now();
      for (let i = 0; i < n; i++) {
        await sleep(Math.max(0, t0 + (i * 1000) / opts.rate - performance.now()));
        started.push(lifecycle());
      }
      await Promise.all(started);
      return;
    }
    let left = n;
    await Promise.all(
      Array.from({ length: Math.min(opts.concurrency, n) }, async () => {
        while (left > 0) {
          left--;
          await lifecycle();
        }
      }),
    );
  };

  const pace = opts.rate > 0 ? `${opts.rate} a second` : `concurrency ${opts.concurrency}`;
  note(`floor: ${opts.warmup} warm-up lifecycles, then ${opts.runners} at ${pace}`);
  await run(opts.warmup);
  requests = 0;
  outbound = 0;
  const cpuBefore = processGroupCpu(dev.pid);
  const t0 = performance.now();
  await run(opts.runners);
  const wallS = (performance.now() - t0) / 1000;
  const cpuAfter = processGroupCpu(dev.pid);
  const perRunner = (seconds) => Math.round((seconds * 1000 * 10) / opts.runners) / 10;
  const perRequest = (seconds) => Math.round((seconds * 1000 * 100) / requests) / 100;
  const cpu =
    cpuBefore && cpuAfter && String(cpuBefore.workerdPids) === String(cpuAfter.workerdPids)
      ? { workerd: cpuAfter.workerd - cpuBefore.workerd, wrangler: cpuAfter.wrangler - cpuBefore.wrangler }
      : null;
  process.stdout.write(
    `${JSON.stringify(
      {
        runners: opts.runners,
        ...(opts.rate > 0 ? { rate_per_s: opts.rate } : { concurrency: opts.concurrency }),
        requests_per_runner: requests / opts.runners,
        outbound_calls_per_runner: outbound / opts.runners,
        floor_cpu_ms_per_runner: cpu && {
          workerd: perRunner(cpu.workerd),
          wrangler_dev_proxy: perRunner(cpu.wrangler),
          note: "user+system CPU of the processes under wrangler dev, from /proc, over the floor's lifecycles (bench/floor-worker.ts)",
        },
        floor_cpu_ms_per_request: cpu && { workerd: perRequest(cpu.workerd), wrangler_dev_proxy: perRequest(cpu.wrangler) },
        wall_s: Math.round(wallS * 10) / 10,
      },
      null,
      2,
    )}\n`,
  );
} finally {
  stop();
  fake.close();
  await sleep(300);
  rmSync(work, { recursive: true, force: true });
}

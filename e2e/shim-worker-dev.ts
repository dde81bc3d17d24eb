/**
 * A provider shim Worker (shims/<dir>) under `wrangler dev` on a free loopback port: its own
 * copy of the config, its secrets in a .dev.vars beside it, its state in a temporary directory
 * (a developer's shims/<dir>/.dev.vars is never read or touched). Shared by the cloud shims'
 * end-to-end scenarios and conformance runs (ec2-shim.ts, hetzner-shim.ts).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, root, sleep } from "../bench/harness.mjs";

export interface ShimWorkerDev {
  url: string;
  secret: string;
  stop(): Promise<void>;
  /** SIGKILL now (synchronous, for exit handlers). */
  killNow(): void;
}

export async function startShimWorkerDev(opts: {
  /** The folder under shims/ holding the Worker's wrangler.toml. */
  dir: string;
  /** How errors name it, e.g. "the EC2 shim". */
  label: string;
  secret: string;
  vars: Record<string, string>;
  log?: string;
}): Promise<ShimWorkerDev> {
  const work = mkdtempSync(join(tmpdir(), `edgerunner-${opts.dir}-shim-`));
  const port = await freePort();
  // wrangler's inspector proxy on a port of its own: its default (9229) is every wrangler dev's,
  // and two shims started at once would both find it free and one fail to bind it.
  const inspectorPort = await freePort();
  const config = readFileSync(join(root, "shims", opts.dir, "wrangler.toml"), "utf8").replace(
    /^main = "([^"]+)"/m,
    (_, p) => `main = ${JSON.stringify(join(root, "shims", opts.dir, p))}`,
  );
  writeFileSync(join(work, "wrangler.toml"), config);
  const vars: Record<string, string> = { SHIM_SECRET: opts.secret, ...opts.vars };
  writeFileSync(
    join(work, ".dev.vars"),
    Object.entries(vars)
      .map(([k, v]) => `${k}=${v}`)
      .join("\n") + "\n",
  );
  const wrangler = join(root, "node_modules/wrangler/bin/wrangler.js");
  // Its own process group, so stopping it takes workerd along.
  const proc: ChildProcess = spawn(
    process.execPath,
    [
      wrangler,
      "dev",
      "-c",
      join(work, "wrangler.toml"),
      "--ip",
      "127.0.0.1",
      "--port",
      String(port),
      "--inspector-port",
      String(inspectorPort),
      "--persist-to",
      join(work, "state"),
      "--log-level",
      opts.log ? "log" : "error",
    ],
    {
      cwd: work,
      env: { ...process.env, CI: "true", WRANGLER_SEND_METRICS: "false" },
      stdio: ["ignore", opts.log ? openSync(opts.log, "a") : "ignore", "inherit"],
      detached: true,
    },
  );
  const url = `http://127.0.0.1:${port}`;
  const killNow = () => {
    try {
      if (proc.exitCode === null) process.kill(-proc.pid!, "SIGKILL");
    } catch {
      // already gone
    }
  };
  // A run that dies takes the Worker with it (nothing left holding the port).
  process.once("exit", killNow);
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`${url}/healthz`)).ok) break;
    } catch {
      // not up yet
    }
    if (i > 600 || proc.exitCode !== null) {
      killNow();
      throw new Error(`${opts.label} did not start under wrangler dev within 60 s`);
    }
    await sleep(100);
  }
  return {
    url,
    secret: opts.secret,
    killNow,
    async stop() {
      if (proc.exitCode === null) {
        const exited = new Promise((r) => proc.once("exit", r));
        try {
          process.kill(-proc.pid!, "SIGTERM");
        } catch {
          // already gone
        }
        await Promise.race([exited, sleep(5000)]);
      }
      killNow();
      process.off("exit", killNow);
      rmSync(work, { recursive: true, force: true });
    },
  };
}

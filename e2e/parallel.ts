/**
 * `npm run e2e -- --parallel N` (e2e/run.ts): up to N scenarios at a time, each in a child
 * process running e2e/run.ts for that scenario alone. A scenario shares nothing with another but
 * the machine: its coordinator, fakes and shims are its own, in its own process, its servers on
 * ports from its lane's own range (PORTS_FROM).
 *
 * What a child prints comes out whole: its JSON line as soon as it is written, the rest of what
 * it says (on stderr: nothing when it passes, its story and broken invariants when it fails) when
 * it ends, so two scenarios' stories never interleave. E2E_VERBOSE=1 passes stderr through line
 * by line as it comes instead. A run stopped from outside stops every child, each of which still
 * shows how far it had got (as a scenario run alone does).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const runScript = fileURLToPath(new URL("./run.ts", import.meta.url));
/**
 * Each lane's scenarios take their servers' ports from a range of the lane's own (E2E_PORT_RANGE,
 * bench/harness.mjs freePort), below the ephemeral ports (32768 and up on Linux, 49152 and up
 * elsewhere).
 */
const PORTS_FROM = 20_000;
const PORTS_PER_LANE = 500;
const MAX_LANES = Math.floor((32_768 - PORTS_FROM) / PORTS_PER_LANE);

/** Runs each of `runs` (scenario names; a name twice runs it twice) in a child, at most `parallel` at a time, in the order given. */
export async function runInChildren(runs: string[], parallel: number, profileArgs: string[]): Promise<{ passed: number; failed: number }> {
  if (parallel > MAX_LANES) throw new Error(`--parallel takes at most ${MAX_LANES}`);
  const verbose = process.env.E2E_VERBOSE === "1";
  const running = new Set<ChildProcess>();
  let stopping = false;
  let passed = 0;
  let failed = 0;

  for (const [signal, code] of [
    ["SIGINT", 130],
    ["SIGTERM", 143],
  ] as const)
    process.once(signal, async () => {
      stopping = true;
      const ended = [...running].map((child) => new Promise((r) => child.once("close", r)));
      for (const child of running) child.kill(signal);
      await Promise.all(ended);
      process.exit(code);
    });

  const runOne = (name: string, lane: number) =>
    new Promise<void>((done) => {
      const ports = PORTS_FROM + lane * PORTS_PER_LANE;
      const child = spawn(process.execPath, [...process.execArgv, runScript, ...profileArgs, name], {
        env: { ...process.env, E2E_CHILD: "1", E2E_PORT_RANGE: `${ports}-${ports + PORTS_PER_LANE - 1}` },
        stdio: ["ignore", "pipe", "pipe"],
      });
      running.add(child);
      let out = "";
      let err = "";
      let result = false;
      child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
        out += chunk;
        const end = out.lastIndexOf("\n") + 1;
        if (end) {
          process.stdout.write(out.slice(0, end));
          result = true;
          out = out.slice(end);
        }
      });
      child.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
        err += chunk;
        if (!verbose) return;
        const end = err.lastIndexOf("\n") + 1;
        process.stderr.write(err.slice(0, end));
        err = err.slice(end);
      });
      child.on("close", (code, signal) => {
        running.delete(child);
        if (out) process.stdout.write(`${out}\n`);
        if (err) process.stderr.write(err.endsWith("\n") ? err : `${err}\n`);
        if (code === 0) passed++;
        else {
          failed++;
          if (!result) process.stderr.write(`e2e: ${name}: ended without a result (${signal ?? `exit code ${code}`})\n`);
        }
        done();
      });
    });

  const queue = [...runs];
  const lane = async (lane: number) => {
    for (let name = queue.shift(); name !== undefined && !stopping; name = queue.shift()) await runOne(name, lane);
  };
  await Promise.all(Array.from({ length: Math.min(parallel, runs.length) }, (_, i) => lane(i)));
  return { passed, failed };
}

/**
 * npm run e2e [-- A|B ...] [--repeat N] [--parallel N] [--profile loopback|production] [--shim sync|async]
 *
 * End-to-end scenarios on one machine: the coordinator under `wrangler dev`, the fake GitHub
 * playing workflows, the simulator shim running simulated runners (see e2e/stack.ts). Each
 * scenario queues jobs in bursts, waits until they are done and the world has settled, checks
 * the invariants (e2e/scenario-runner.ts), prints a summary (one JSON line on stdout) and fails
 * on any broken one. A, B, S, E, EC2, GCE and HETZNER are described in e2e/scenarios.ts; two
 * scenarios make worlds of their own:
 *
 * G: a GitHub, a Gitea and a Forgejo scale set side by side (e2e/forges.ts), 60 jobs in 3 bursts,
 *    the coordinator killed and restarted once mid-run; every forge's jobs served once, nothing left.
 * SHAPES: job-shaped runners (e2e/shapes.ts): a shaped scale set on the simulator, one on the EC2
 *    shim Worker and one on the Hetzner shim Worker, 40 jobs each of five shapes (two arm64, one
 *    spot, two images) from 8 runs, each job's label naming its run, and out-of-bounds jobs.
 *    Checked: every job served once on a machine of the flavor and image its shape must get, by
 *    a runner with its own shape label only; one machine per job; the others refused, no machine.
 *
 * A passing scenario prints its JSON line alone. A failing one also prints what it said on its
 * way (e2e/progress.ts; E2E_VERBOSE=1 prints that as it goes) and each broken invariant. The last
 * line counts the scenarios: `e2e: N passed, N failed`.
 *
 * --parallel N runs up to N scenarios at a time (default 1: one after the other, in this
 * process), each in a child process of its own (e2e/parallel.ts): every scenario makes its own
 * world (its own coordinator, fakes and shims, each on ports of its own), so they share nothing
 * but the machine. They are started in the order given: the longest first makes the shortest run.
 * Lines come out as each scenario ends; the summary lines are the same.
 */
import { runForgesScenario } from "./forges.ts";
import { runInChildren } from "./parallel.ts";
import { profileFromArgs } from "./profiles.ts";
import { dropHeld, say, showHeld } from "./progress.ts";
import { runScenario } from "./scenario-runner.ts";
import { scenarios } from "./scenarios.ts";
import { runShapesScenario } from "./shapes.ts";

const { profile, rest: args } = profileFromArgs(process.argv.slice(2));
let repeat = 1;
let parallel = 1;
const names: string[] = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === "--repeat") repeat = Number(args[++i]);
  else if (args[i] === "--parallel") {
    parallel = Number(args[++i]);
    if (!Number.isInteger(parallel) || parallel < 1) throw new Error("--parallel takes a whole number of scenarios, 1 or more");
  } else names.push(args[i]!.toUpperCase());
}
/** Scenarios in worlds of their own, each in its file. */
const ownWorlds: Record<string, typeof runForgesScenario> = { G: runForgesScenario, SHAPES: runShapesScenario };
const chosen = names.length ? names : [...Object.keys(scenarios), ...Object.keys(ownWorlds)];
for (const name of chosen)
  if (!scenarios[name] && !ownWorlds[name])
    throw new Error(`no scenario ${name}; have ${[...Object.keys(scenarios), ...Object.keys(ownWorlds)].join(", ")}`);

if (parallel > 1 && chosen.length * repeat > 1) {
  // The profile's own arguments go to every child, which runs one scenario once.
  const profileArgs = ["--profile", profile.name, "--shim", profile.shim];
  if (profile.shimBatchMax !== null) profileArgs.push("--shim-batch", String(profile.shimBatchMax));
  const runs = Array.from({ length: repeat }, () => chosen).flat();
  const { passed, failed } = await runInChildren(runs, parallel, profileArgs);
  process.stderr.write(`e2e: ${passed} passed, ${failed} failed\n`);
  process.exit(failed ? 1 : 0);
}

// A run stopped from outside (a time limit, Ctrl-C) still shows how far its scenario had got.
for (const [signal, code] of [
  ["SIGINT", 130],
  ["SIGTERM", 143],
] as const)
  process.once(signal, () => {
    showHeld();
    process.exit(code);
  });

let passed = 0;
let failed = 0;
for (let r = 0; r < repeat; r++) {
  for (const name of chosen) {
    const sc = scenarios[name];
    const own = ownWorlds[name];
    const t = Date.now();
    say(`scenario ${name}${repeat > 1 ? ` (run ${r + 1}/${repeat})` : ""}`);
    let out: Awaited<ReturnType<typeof runScenario>>;
    try {
      out = sc ? await runScenario(sc, profile) : await own!(profile);
    } catch (err) {
      showHeld();
      throw err;
    }
    if (out.ok) dropHeld();
    else showHeld();
    console.log(
      JSON.stringify({ ...out.summary, profile: profile.name, shim: profile.shim, wall_s: Math.round((Date.now() - t) / 100) / 10 }),
    );
    if (out.ok) passed++;
    else {
      failed++;
      for (const v of out.violations) process.stderr.write(`e2e: ${name}: BROKEN: ${v}\n`);
    }
  }
}
// A child of a parallel run (e2e/parallel.ts) leaves the count to its parent.
if (!process.env.E2E_CHILD) process.stderr.write(`e2e: ${passed} passed, ${failed} failed\n`);
process.exit(failed ? 1 : 0);

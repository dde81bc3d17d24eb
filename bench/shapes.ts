/**
 * npm run bench:shapes [-- --jobs 40 --warmup 3]
 *
 * What a job's shape costs between GitHub queuing it and the shim's create (issue 38: a shaped
 * job's queued → create p50 within 5 ms of an unshaped one, the flavor catalogue cached rather
 * than fetched per job). The whole product on one machine (e2e/stack.ts, loopback): an unshaped
 * scale set and a shaped one on the simulator shim, no idle runners; jobs queued one at a time,
 * alternating between the two so that any drift of the machine falls on both alike, each waited
 * for until a runner took it. Per job: the simulator's timestamp of the create for its scale set
 * minus the job's queued time at the fake GitHub (bench:workflows' `queued_to_create`).
 *
 * Prints one JSON document: p50/p90/max for each, the p50 difference, and how often the
 * simulator was asked for its catalogue (`GET /v1/flavors`): by the admin API's check when the
 * shaped scale set was made, and then by its jobs (once, the first; the object keeps it 10 min).
 */
import { startStack } from "../e2e/stack.ts";
import { createScaleSet, shimCreates, shimRequests, waitJobs } from "./bench-world.ts";
import { note, percentile } from "./harness.mjs";

function flags(argv: string[]) {
  const out = { jobs: 40, warmup: 3 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const v = Number(argv[++i]);
    if (a === "--jobs" && Number.isInteger(v) && v >= 1) out.jobs = v;
    else if (a === "--warmup" && Number.isInteger(v) && v >= 1) out.warmup = v;
    else throw new Error(`${a}: --jobs N (≥ 1) and --warmup N (≥ 1, so the catalogue is fetched before the measured jobs)`);
  }
  return out;
}
const opts = flags(process.argv.slice(2));

const stack = await startStack({
  vars: { RECONCILE_INTERVAL_SECONDS: "5", SCALE_DOWN_IDLE_SECONDS: "5", ORPHAN_CHECK_SECONDS: "600" },
  // As bench:workflows runs it: wrangler dev's trace collector off, machines at once.
  localObservability: false,
  sim: { job_ms: 200, poll_ms: 20 },
});
const { coordinator, gh, w } = stack;
const flavorCalls = async () => (await shimRequests(stack)).filter((r) => r.operation === "flavors").length;

try {
  const plain = await createScaleSet(stack, "plain", 10, "webhook", "on_boot");
  const shaped = (await coordinator.api("POST", `/repositories/${w.repo.id}/scalesets`, {
    name: "shaped",
    provider_name: w.provider,
    labels: ["self-hosted", "linux", "shaped"],
    max_runners: 10,
    min_idle_runners: 0,
    image: "ubuntu:24.04",
    flavor: "small",
    shape: { images: { "ubuntu-24.04": "ubuntu:24.04" }, architectures: ["amd64", "arm64"] },
  })) as { id: string };
  const atCreate = await flavorCalls();

  let run = 7_700_000_000;
  /** Queues one job on the scale set and waits until a runner took it: its queued → create, in ms. */
  const one = async (kind: "plain" | "shaped", i: number) => {
    const runId = run++;
    const labels =
      kind === "plain" ? ["self-hosted", "linux", "plain"] : ["self-hosted", "linux", "shaped", `edgerunner=${runId}/cpu=2/ram=4`];
    const name = `${kind}-${i}`;
    await gh.queueJobs({ repository: "octo/app", labels, name, run_id: runId });
    const [job] = await waitJobs(stack, name, (j) => j.in_progress_at !== null, 60_000);
    const poolId = kind === "plain" ? plain.id : shaped.id;
    const create = (await shimCreates(stack)).find((r) => r.pool_id === poolId && r.at >= job!.queued_at);
    if (!create) throw new Error(`${name}: no create for its scale set after it was queued`);
    return create.at - job!.queued_at;
  };

  note(`shapes: ${opts.warmup} warm-up jobs of each kind, then ${opts.jobs} of each, alternating`);
  for (let i = 0; i < opts.warmup; i++) {
    await one("plain", -1 - i);
    await one("shaped", -1 - i);
  }
  const afterWarmup = await flavorCalls();
  const samples = { plain: [] as number[], shaped: [] as number[] };
  for (let i = 0; i < opts.jobs; i++) {
    // Which goes first alternates too, so neither always follows the other's runner finishing.
    const order: ("plain" | "shaped")[] = i % 2 ? ["shaped", "plain"] : ["plain", "shaped"];
    for (const kind of order) samples[kind].push(await one(kind, i));
  }
  const total = await flavorCalls();
  const figures = (xs: number[]) => {
    const s = [...xs].sort((a, b) => a - b);
    return { jobs: s.length, p50_ms: percentile(s, 50), p90_ms: percentile(s, 90), max_ms: s.at(-1) ?? null };
  };
  const unshaped = figures(samples.plain);
  const shapedFigures = figures(samples.shaped);
  const difference = shapedFigures.p50_ms! - unshaped.p50_ms!;
  console.log(
    JSON.stringify(
      {
        queued_to_create: {
          unshaped,
          shaped: shapedFigures,
          p50_difference_ms: difference,
          target: "shaped p50 within 5 ms of unshaped",
          within_target: Math.abs(difference) <= 5,
        },
        get_flavors: {
          at_scale_set_create: atCreate,
          during_warmup: afterWarmup - atCreate,
          during_measured_jobs: total - afterWarmup,
          note: "the simulator's GET /v1/flavors: the admin API checks the catalogue when the shaped scale set is made; its object fetches it for the first job and keeps it 10 min",
        },
      },
      null,
      2,
    ),
  );
} finally {
  await stack.stop();
}

/**
 * npm run demo [-- --jobs 6]
 *
 * Edgerunner doing its job on this machine: the coordinator (`wrangler dev`), the fake GitHub
 * and the simulator shim. Configures a repository and a scale set, queues a handful of jobs
 * and shows them being served, then leaves everything running for you to explore: the
 * dashboard's address and the admin token to sign in with, and curl lines for the API
 * (demo-closing.ts). Ctrl-C stops it all.
 */
import { sleep } from "../bench/harness.mjs";
import { demoClosing } from "./demo-closing.ts";
import { startStack } from "./stack.ts";

const i = process.argv.indexOf("--jobs");
const jobCount = i > 0 ? Number(process.argv[i + 1]) : 6;
const t0 = Date.now();
const say = (msg: string) => console.log(`[${((Date.now() - t0) / 1000).toFixed(1).padStart(5)}s] ${msg}`);

say("starting the fake GitHub, the simulator shim and the coordinator (wrangler dev)…");
const stack = await startStack({
  vars: { RECONCILE_INTERVAL_SECONDS: "5", SCALE_DOWN_IDLE_SECONDS: "10", STUCK_GRACE_SECONDS: "10" },
  sim: { boot_delay_ms: 500, job_ms: 2000 },
  log: (line: any) => {
    if (line.event === "sim_machine_created") say(`simulator: machine ${line.instance} created, booting`);
    else if (line.event === "sim_runner_idle") say(`simulator: runner ${line.instance} registered with GitHub, idle`);
    else if (line.event === "sim_job_started") say(`simulator: runner ${line.instance} runs job ${line.job_id}`);
    else if (line.event === "sim_job_done") say(`simulator: runner ${line.instance} finished job ${line.job_id} and exits (ephemeral)`);
    else if (line.event === "sim_machine_deleted") say(`simulator: machine ${line.instance} deleted by the coordinator`);
  },
});
const { coordinator, gh, w } = stack;
const stop = () => void stack.stop().then(() => process.exit(0));
process.on("SIGINT", stop);
process.on("SIGTERM", stop);

say(`coordinator at ${coordinator.url}`);
const ss = await coordinator.api("POST", `/repositories/${w.repo.id}/scalesets`, {
  name: "linux-demo",
  provider_name: w.provider,
  labels: ["self-hosted", "linux", "demo"],
  max_runners: 4,
  min_idle_runners: 1,
  image: "ubuntu:24.04",
  flavor: "small",
});
say(`scale set ${ss.name} (${ss.id}): labels self-hosted,linux,demo, max 4 runners, 1 kept idle`);
await sleep(3000);

say(`queueing ${jobCount} jobs on octo/app (signed workflow_job webhooks go to the coordinator)`);
await gh.queueJobs({ repository: "octo/app", labels: ["self-hosted", "linux", "demo"], count: jobCount, name: "demo" });
const seen = new Map<number, string>();
for (;;) {
  const jobs = await gh.workflowJobs();
  for (const j of jobs) {
    if (seen.get(j.id) !== j.status) {
      seen.set(j.id, j.status);
      if (j.status === "in_progress")
        say(`GitHub: job ${j.id} assigned to ${j.runner_name} after ${j.in_progress_at! - j.queued_at} ms in the queue`);
      if (j.status === "completed") say(`GitHub: job ${j.id} completed on ${j.runner_name}`);
    }
  }
  if (jobs.every((j) => j.status === "completed")) break;
  await sleep(250);
}
say(`all ${jobCount} jobs served. The coordinator keeps one idle runner and scales the rest down.`);
console.log(
  demoClosing({
    coordinatorUrl: coordinator.url,
    adminToken: coordinator.devVars.ADMIN_TOKEN!,
    scaleSetId: ss.id,
    fakeGithubUrl: w.world.url,
  }),
);

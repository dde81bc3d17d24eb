/**
 * What the workflow benchmark (bench/workflows.ts, bench/burst.ts) does to the stack: a scale set
 * on the world's repository in either intake mode, its listener's session (GitHub only takes jobs
 * for a runner scale set once it has one), jobs waited for at the fake GitHub, and the simulated
 * machines' timelines.
 */
import type { Stack } from "../e2e/stack.ts";
import type { MachineTimeline } from "../shims/simulator/simulator.ts";
import type { WorkflowJob } from "../test/fake-github/types.ts";
import { createsAsked } from "../test/fake-shim/requests.ts";
import type { RecordedRequest as ShimRequest } from "../test/fake-shim/types.ts";
import { note, sleep } from "./harness.mjs";

export type Intake = "webhook" | "scaleset_api";
export type JitTiming = "on_boot" | "before_create";

/** The labels a job names to land on scale set `name`: its own name for the scale set API, self-hosted ones for webhooks. */
export const jobLabels = (name: string, intake: Intake) => (intake === "scaleset_api" ? [name] : ["self-hosted", "linux", name]);

/** A scale set with room for `max` runners and no idle ones; a scale set API one once its listener holds a session. */
export async function createScaleSet(stack: Stack, name: string, max: number, intake: Intake, jit: JitTiming): Promise<{ id: string }> {
  const { coordinator, w } = stack;
  const ss = (await coordinator.api("POST", `/repositories/${w.repo.id}/scalesets`, {
    name,
    intake,
    provider_name: w.provider,
    labels: ["self-hosted", "linux", name],
    max_runners: max,
    min_idle_runners: 0,
    image: "ubuntu:24.04",
    flavor: "small",
    ...(intake === "webhook" && { jit_config_timing: jit }),
  })) as { id: string };
  for (let i = 0; intake === "scaleset_api"; i++) {
    const shown = (await coordinator.api("GET", `/scalesets/${ss.id}`)) as { status: { listener: { session_open: boolean } | null } };
    if (shown.status.listener?.session_open) break;
    if (i > 300) throw new Error(`${name}: no scale set API session after 30 s`);
    await sleep(100);
  }
  return ss;
}

/** Waits until `done` holds for the jobs named `name`, polling the fake GitHub; `partial`: at the deadline, returns them as they are. */
export async function waitJobs(
  stack: Stack,
  name: string,
  done: (j: WorkflowJob) => boolean,
  timeoutMs: number,
  what?: string,
  partial = false,
): Promise<WorkflowJob[]> {
  const deadline = Date.now() + timeoutMs;
  let said = Date.now();
  for (;;) {
    const jobs = (await stack.gh.workflowJobs()).filter((j) => j.name === name);
    if (jobs.length && jobs.every(done)) return jobs;
    if (what && Date.now() - said > 10_000) {
      said = Date.now();
      note(`${name}: ${jobs.filter(done).length} of ${jobs.length} ${what}`);
    }
    if (Date.now() > deadline && partial) {
      note(
        `${name}: gave up waiting: ${jobs.filter((j) => !done(j)).length} of ${jobs.length} jobs not ${what ?? "done"} after ${timeoutMs} ms`,
      );
      return jobs;
    }
    if (Date.now() > deadline)
      throw new Error(`${name}: ${jobs.filter((j) => !done(j)).length} of ${jobs.length} jobs not there after ${timeoutMs} ms`);
    await sleep(50);
  }
}

/** The protocol requests the shim got, oldest first. */
export async function shimRequests(stack: Stack): Promise<ShimRequest[]> {
  return (await (await fetch(`${stack.w.shimControl}/requests`)).json()) as ShimRequest[];
}

/** Each machine asked for, a batch create counting once per instance in it. */
export async function shimCreates(stack: Stack) {
  return createsAsked(await shimRequests(stack));
}

/** The simulator's timelines of a scale set's machines (the live ones and the deleted ones it still keeps). */
export async function machineTimelines(stack: Stack, poolId: string): Promise<MachineTimeline[]> {
  const q = new URLSearchParams({ tenant: stack.w.tenant.id, pool: poolId });
  const res = await fetch(`${stack.sim.url}/_control/simulator/timeline?${q}`);
  if (!res.ok) throw new Error(`simulator timeline: ${res.status} ${await res.text()}`);
  return (await res.json()) as MachineTimeline[];
}

/** Waits until the simulator has no machine left (up to `timeoutMs`); how many are left. */
export async function waitMachinesGone(stack: Stack, timeoutMs: number): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  let left = (await stack.machines()).length;
  while (left && Date.now() < deadline) {
    await sleep(250);
    left = (await stack.machines()).length;
  }
  return left;
}

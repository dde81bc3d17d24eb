/**
 * A second tenant that attacks the first (scenario B): a repository registered beside octo/app
 * with a webhook secret of its own, whose holder signs deliveries that name octo/app's job ids
 * (seen at the fake GitHub) and octo/app's runners (seen through the admin API): `in_progress`
 * and `completed` for jobs that are queued or running, and `completed` for job ids not yet
 * handed out. The scenario's invariants (every job completed exactly once, nothing left but the
 * idle minimum) say whether any of it reached the victim; the intruder checks its own answers:
 * each forged delivery is accepted as its own job and routed nowhere.
 */
import { randomBytes } from "node:crypto";
import { sleep } from "../bench/harness.mjs";
import { deliverWebhook } from "../bench/harness-world.mjs";
import type { Stack } from "./stack.ts";

export interface IntruderReport {
  forged: number;
  /** Answers by status. */
  answers: Record<string, number>;
  violations: string[];
}

const pick = <T>(xs: readonly T[]): T | undefined => xs[Math.floor(Math.random() * xs.length)];

/** Registers the intruding repository and forges deliveries every `everyMs` until stopped. */
export async function startIntruder(stack: Stack, everyMs = 250): Promise<{ stop(): Promise<IntruderReport> }> {
  const { coordinator, gh, w } = stack;
  const victim = await coordinator.api("GET", `/repositories/${w.repo.id}`);
  const credentials = await coordinator.api("GET", `/github/credentials/${victim.credentials_id}`);
  const secret = `whsec-intruder-${randomBytes(6).toString("hex")}`;
  await coordinator.api("POST", "/repositories", {
    owner: "intruder",
    name: "app",
    credentials_name: credentials.name,
    webhook_secret: secret,
  });

  const report: IntruderReport = { forged: 0, answers: {}, violations: [] };
  const forge = async (action: "in_progress" | "completed", jobId: number, labels: string[], runner: string | null) => {
    const now = new Date().toISOString();
    const payload = {
      action,
      workflow_job: {
        id: jobId,
        run_id: jobId,
        run_attempt: 1,
        name: "forged",
        workflow_name: "intruder",
        status: action,
        conclusion: action === "completed" ? "success" : null,
        labels,
        runner_id: runner ? 1 : null,
        runner_name: runner,
        created_at: now,
        started_at: now,
        completed_at: action === "completed" ? now : null,
      },
      repository: { name: "app", full_name: "intruder/app", owner: { login: "intruder" } },
    };
    const res = await deliverWebhook(coordinator, secret, payload);
    const body = (await res.json().catch(() => null)) as { matched?: boolean } | null;
    report.forged++;
    report.answers[res.status] = (report.answers[res.status] ?? 0) + 1;
    // A 5xx is the coordinator being killed and restarted (chaos); anything else but 200 is wrong.
    if (res.status !== 200 && res.status < 500) report.violations.push(`a forged ${action} for job ${jobId} was answered ${res.status}`);
    else if (body?.matched) report.violations.push(`a forged ${action} for job ${jobId} reached a scale set`);
  };

  let running = true;
  const loop = (async () => {
    while (running) {
      try {
        const [jobs, instances] = await Promise.all([gh.workflowJobs(), coordinator.api("GET", "/instances") as Promise<any[]>]);
        const runners = instances.filter((i) => i.status !== "deleted").map((i) => i.name as string);
        const open = jobs.filter((j) => j.status !== "completed");
        for (let k = 0; k < 3; k++) {
          const j = pick(open);
          if (!j) break;
          // Its runner if it has one (mid-job), else any of the victim's runners (idle ones too).
          await forge(k % 2 ? "in_progress" : "completed", j.id, j.labels, j.runner_name ?? pick(runners) ?? null);
        }
        // Job ids not handed out yet (GitHub's grow): claimed before the victim's real `queued` arrives.
        if (jobs.length) {
          const next = Math.max(...jobs.map((j) => j.id)) + 1;
          for (let id = next; id < next + 2; id++) await forge("completed", id, ["self-hosted", "linux", "small"], pick(runners) ?? null);
        }
      } catch {
        // The coordinator is being restarted (chaos): try again at the next tick.
      }
      await sleep(everyMs);
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      if (report.forged < 20) report.violations.push(`the intruder forged only ${report.forged} deliveries`);
      return report;
    },
  };
}

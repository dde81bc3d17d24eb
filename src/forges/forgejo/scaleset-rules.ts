import type { Forge } from "../../db/github/schema";
import type { JitConfigTiming, ScaleSetIntake } from "../../db/scaleset/schema";

/**
 * What a scale set may be on a Forgejo endpoint, and what intake `poll` may be on, as a pure
 * check the scale set routes call. Forgejo sends no `workflow_job` webhooks and has no runner
 * scale set API: its scale sets poll for waiting jobs (intake `poll`), and each runner is
 * registered by the scale set before its machine is created, for one waiting job (its handle).
 */

/** The intake a scale set gets when none is sent: `poll` on Forgejo, `webhook` elsewhere. */
export const defaultIntakeFor = (forge: Forge): ScaleSetIntake => (forge === "forgejo" ? "poll" : "webhook");

export interface IntakeIssue {
  path: string;
  message: string;
}

/** The scale set as it will be (what was sent over what is stored). */
export interface IntakeFacts {
  forge: Forge;
  intake: ScaleSetIntake;
  jitConfigEnabled: boolean;
  /** The timing sent, if one was (a stored one is overridden: see timingFor). */
  jitConfigTimingSent: JitConfigTiming | undefined;
  minIdleRunners: number;
  /** Its schedule as it will be (sent, or kept); none: no entries. */
  schedules?: readonly { name: string; min_idle_runners: number }[];
}

export function forgeIntakeIssues(f: IntakeFacts): IntakeIssue[] {
  if (f.forge !== "forgejo") {
    return f.intake === "poll"
      ? [{ path: "intake", message: "intake poll is for scale sets on a Forgejo endpoint; use webhook (or scaleset_api on GitHub)" }]
      : [];
  }
  const issues: IntakeIssue[] = [];
  if (f.intake !== "poll")
    issues.push({
      path: "intake",
      message: `Forgejo sends no workflow_job webhooks and has no runner scale set API: use intake poll (the default on a Forgejo endpoint), not ${f.intake}`,
    });
  if (!f.jitConfigEnabled)
    issues.push({
      path: "jit_config_enabled",
      message: "a Forgejo runner is registered by the scale set before its machine is created: leave jit_config_enabled true",
    });
  if (f.jitConfigTimingSent === "on_boot")
    issues.push({ path: "jit_config_timing", message: "a Forgejo runner is registered before_create: send before_create or leave it out" });
  if (f.minIdleRunners > 0)
    issues.push({
      path: "min_idle_runners",
      message: "each Forgejo runner is made for one waiting job (forgejo-runner one-job --handle): set min_idle_runners to 0",
    });
  // A schedule entry sets min idle too: the same holds for each (an idle Forgejo runner has no job to run).
  for (const [i, entry] of (f.schedules ?? []).entries())
    if (entry.min_idle_runners > 0)
      issues.push({
        path: `schedules.${i}.min_idle_runners`,
        message: `schedule '${entry.name}' asks for ${entry.min_idle_runners} idle runners, but each Forgejo runner is made for one waiting job (forgejo-runner one-job --handle): set its min_idle_runners to 0`,
      });
  return issues;
}

/** The JIT timing stored: before_create for Forgejo (and the scale set API), else as sent or kept. */
export const timingFor = (forge: Forge, intake: ScaleSetIntake, sentOrKept: JitConfigTiming): JitConfigTiming =>
  forge === "forgejo" || intake === "scaleset_api" ? "before_create" : sentOrKept;

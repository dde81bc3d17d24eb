import type { Forge } from "../db/github/schema";

/**
 * What a shaped scale set must be beside its bounds: each machine is one job's, so it keeps no
 * idle runners (nor a schedule of them), and its jobs come from workflow_job webhooks (the only
 * intake whose jobs carry their labels). On GitHub its runners register with JIT configs: the
 * shape label goes into the config's label list as written, where config.sh's `--labels` would
 * split a comma-separated shape.
 */
export function shapedScaleSetIssues(s: {
  forge: Forge;
  intake: string;
  jitConfigEnabled: boolean;
  minIdleRunners: number;
  scheduleCount: number;
}): { path: string; message: string }[] {
  const issues: { path: string; message: string }[] = [];
  if (s.forge === "forgejo")
    issues.push({ path: "shape", message: "Forgejo sends no workflow_job webhooks: shaped scale sets need GitHub or Gitea" });
  if (s.intake !== "webhook") issues.push({ path: "intake", message: "a shaped scale set takes its jobs from webhooks (intake: webhook)" });
  if (s.forge === "github" && !s.jitConfigEnabled)
    issues.push({ path: "jit_config_enabled", message: "a shaped scale set on GitHub registers its runners with JIT configs" });
  if (s.minIdleRunners !== 0)
    issues.push({ path: "min_idle_runners", message: "a shaped scale set keeps no idle runners: each machine is made for its job" });
  if (s.scheduleCount !== 0)
    issues.push({ path: "schedules", message: "a shaped scale set keeps no idle runners, so no min idle schedule" });
  return issues;
}

import type { Forge } from "../../db/github/schema";
import type { ScaleSetIntake } from "../../db/scaleset/schema";
import type { FieldProblem } from "../../http/errors";

/**
 * What a scale set on a Gitea endpoint may be. Gitea has no just-in-time runner configs (its
 * runners register with a registration token, `act_runner register --ephemeral`) and no runner
 * scale set API: its jobs arrive as `workflow_job` webhooks only (Gitea 1.24 or later).
 */

/**
 * jit_config_enabled when the request leaves it out: off on Gitea only (GitHub mints JIT configs;
 * a Forgejo runner's registration is minted the same way, before its machine is created).
 */
export const defaultJitConfigEnabled = (forge: Forge): boolean => forge !== "gitea";

/** Why these settings cannot be a Gitea scale set's, as field problems (none for other forges). */
export function giteaScaleSetProblems(forge: Forge, s: { jitConfigEnabled: boolean; intake: ScaleSetIntake }): FieldProblem[] {
  if (forge !== "gitea") return [];
  const problems: FieldProblem[] = [];
  if (s.jitConfigEnabled) {
    problems.push({
      path: "jit_config_enabled",
      message:
        "Gitea has no just-in-time runner configs: leave jit_config_enabled out (it defaults to false on a Gitea endpoint) or set it to false; machines then register act_runner with a registration token",
    });
  }
  if (s.intake !== "webhook") {
    problems.push({
      path: "intake",
      message: `Gitea sends its jobs as workflow_job webhooks: use intake webhook (not ${s.intake}) and install the webhook (docs/forges.md#gitea)`,
    });
  }
  return problems;
}

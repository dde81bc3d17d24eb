import type { FieldProblem } from "../http/errors";
import { forgeIntakeIssues, type IntakeFacts } from "./forgejo/scaleset-rules";
import { giteaScaleSetProblems } from "./gitea/scaleset-rules";

/**
 * What a scale set may be on its endpoint's forge, in one call for the scale set routes (create
 * and update): Gitea's rules (no JIT, webhooks only) and Forgejo's (poll, before_create, no idle
 * runners), each a no-op on the other forges.
 */
export function forgeScaleSetIssues(facts: IntakeFacts): FieldProblem[] {
  return [...giteaScaleSetProblems(facts.forge, facts), ...forgeIntakeIssues(facts)];
}

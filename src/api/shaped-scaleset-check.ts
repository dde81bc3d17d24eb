import type { Db } from "../db/client";
import type { Forge } from "../db/github/schema";
import { findProvider } from "../db/providers/provider-store";
import type { Env } from "../env";
import { invalidBody } from "../http/errors";
import { providerCatalogueProblem } from "../providers/provider-catalogue";
import type { ShapeBounds } from "../shapes/shape-bounds";
import { shapedScaleSetIssues } from "../shapes/shaped-scaleset-rules";

/**
 * The admin API's checks of a shaped scale set as it will be after a create or an update: its
 * own rules (shaped-scaleset-rules.ts), then, when `askProvider`, its provider's catalogue for
 * it (the one provider call of these routes: a shaped scale set a provider cannot serve is
 * refused at once, with the reason). Throws the 400 the route answers.
 */
export async function assertShapedScaleSet(
  env: Env,
  db: Db,
  s: {
    id: string;
    shape: ShapeBounds;
    forge: Forge;
    intake: string;
    jitConfigEnabled: boolean;
    minIdleRunners: number;
    scheduleCount: number;
    providerName: string;
    extraSpecs: Record<string, unknown>;
  },
  askProvider: boolean,
): Promise<void> {
  const issues = shapedScaleSetIssues(s);
  if (issues.length) throw invalidBody(issues);
  if (!askProvider) return;
  const provider = await findProvider(db, s.providerName);
  if (!provider) throw invalidBody([{ path: "provider_name", message: `unknown provider '${s.providerName}'` }]);
  const problem = await providerCatalogueProblem(env, provider, { id: s.id, extraSpecs: s.extraSpecs });
  if (problem) throw invalidBody([{ path: "shape", message: problem }]);
}

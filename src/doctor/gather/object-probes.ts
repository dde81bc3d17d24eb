import type { Env } from "../../env";
import { scaleSetObject } from "../../scaleset/stub";
import type { ObjectFacts, Probe, ProbeError } from "../facts";
import { probe, withTimeout } from "./probe";

/** The longest the setup check waits for a scale set's object to say how it is doing. */
export const OBJECT_PROBE_TIMEOUT_MS = 5_000;

const objectError = (err: unknown): ProbeError => ({ kind: "unreachable", message: err instanceof Error ? err.message : String(err) });

/** The scale set's object's own account (what GET /scalesets/{id} shows as `status`). */
export function probeObject(env: Pick<Env, "SCALE_SET">, scaleSetId: string, deadline: number): Promise<Probe<ObjectFacts>> {
  return probe(
    deadline,
    async () => {
      const s = await withTimeout(scaleSetObject(env, scaleSetId).status(scaleSetId), OBJECT_PROBE_TIMEOUT_MS, "scale set object");
      const l = s.listener;
      return {
        createFailures: s.create_backoff.failures,
        lastFailureAt: s.create_backoff.last_failure_at,
        hardLimitedAt: s.create_backoff.hard_limited_at,
        createAllowedAt: s.create_backoff.create_allowed_at,
        listener: l && {
          sessionOpen: l.session_open,
          githubScaleSetId: l.github_scale_set_id,
          failures: l.failures,
          lastError: l.last_error,
        },
        poller: s.poller && { failures: s.poller.failures, lastError: s.poller.last_error, lastPollAt: s.poller.last_poll_at },
      };
    },
    objectError,
  );
}

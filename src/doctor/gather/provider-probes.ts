import { keyringFor } from "../../crypto/keyring";
import { open } from "../../crypto/secret-box";
import { secretContext } from "../../crypto/secret-contexts";
import type { DoctorProviderRow } from "../../db/doctor/doctor-queries";
import type { Env } from "../../env";
import { createShimClient, type ShimError } from "../../providers/shim-client";
import { controllerId } from "../../scaleset/ports-factory";
import type { ProbeError, ProviderFacts } from "../facts";
import { probe } from "./probe";

/** The longest the setup check waits for a shim, whatever the provider's own timeout. */
export const SHIM_PROBE_TIMEOUT_MS = 8_000;

/** Shims get this pool id when no scale set uses the provider yet. */
export const NO_POOL = "edgerunner-doctor";

class ShimProbeError extends Error {
  constructor(readonly shim: ShimError) {
    super(shim.message);
  }
}

function shimProbeError(err: unknown): ProbeError {
  if (err instanceof ShimProbeError) {
    const e = err.shim;
    const message = e.message.replace(/^capabilities: /, "").replace(/^shim answered \d+:?\s*/, "");
    if (e.status !== undefined && (e.status < 200 || e.status >= 300)) return { kind: "refused", status: e.status, message };
    if (e.kind === "malformed") return { kind: "malformed", message };
    return { kind: "unreachable", message };
  }
  // The provider's secret did not open: a key that changed without a rotation.
  return { kind: "not_sent", message: err instanceof Error ? err.message : String(err) };
}

/** GET /v1/capabilities, signed with the provider's secret, as a scale set of it would. */
export async function probeProvider(
  env: Env,
  p: DoctorProviderRow,
  deadline: number,
  outbound: typeof fetch,
): Promise<ProviderFacts["capabilities"]> {
  return probe(
    deadline,
    async () => {
      const secret = await open(await keyringFor(env), p.secret_enc, secretContext.provider(p.id));
      const client = createShimClient(
        { name: p.name, url: p.url, secret },
        { controllerId: await controllerId(env), poolId: p.first_scale_set_id ?? NO_POOL, extraSpecs: {} },
        { timeoutMs: Math.min(p.timeout_seconds * 1000, SHIM_PROBE_TIMEOUT_MS), fetch: outbound },
      );
      const caps = await client.capabilities();
      if (!caps.ok) throw new ShimProbeError(caps.error);
      return { interfaceVersion: caps.value.interface_version, batchMax: caps.value.batch_create?.max ?? 0 };
    },
    shimProbeError,
  );
}

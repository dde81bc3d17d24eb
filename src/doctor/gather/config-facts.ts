import { accessConfig, teamDomain } from "../../auth/access";
import { fromBase64 } from "../../crypto/base64url";
import type { Env } from "../../env";
import type { ConfigFacts, Probe } from "../facts";
import { probe } from "./probe";

/** The longest the setup check waits for the Access team's keys. */
export const ACCESS_CERTS_TIMEOUT_MS = 5_000;

/** How many bytes a base64 value decodes to; null when it is not base64. */
function decodedLength(value: string): number | null {
  try {
    return fromBase64(value.trim()).length;
  } catch {
    return null;
  }
}

async function fetchCerts(url: string, outbound: typeof fetch, deadline: number): Promise<Probe<{ keys: number }>> {
  return probe(
    deadline,
    async () => {
      const res = await outbound(url, { headers: { accept: "application/json" }, signal: AbortSignal.timeout(ACCESS_CERTS_TIMEOUT_MS) });
      if (!res.ok) throw Object.assign(new Error(`HTTP ${res.status}`), { status: res.status });
      const body = (await res.json().catch(() => null)) as { keys?: unknown } | null;
      if (!body || !Array.isArray(body.keys)) throw new Error("not a key set (no `keys`)");
      return { keys: body.keys.length };
    },
    (err) => {
      const status = (err as { status?: number }).status;
      const message = err instanceof Error ? err.message : String(err);
      return status !== undefined ? { kind: "refused", status, message: "" } : { kind: "unreachable", message };
    },
  );
}

/** The configuration's facts: which secrets are set and what shape they have (never their values). */
export async function gatherConfig(
  env: Env,
  requestUrl: string | undefined,
  outbound: typeof fetch,
  deadline: number,
): Promise<ConfigFacts> {
  const previous = (env.ENCRYPTION_KEYS_PREVIOUS ?? "").split(",").filter((k) => k.trim());
  const teamRaw = env.ACCESS_TEAM_DOMAIN?.trim() ?? "";
  const access = accessConfig(env);
  let requestOrigin: string | null = null;
  try {
    requestOrigin = requestUrl ? new URL(requestUrl).origin : null;
  } catch {
    requestOrigin = null;
  }
  return {
    publicUrl: env.PUBLIC_URL?.trim() || null,
    requestOrigin,
    adminToken: { set: Boolean(env.ADMIN_TOKEN), length: env.ADMIN_TOKEN?.length ?? 0 },
    encryptionKey: {
      set: Boolean(env.ENCRYPTION_KEY?.trim()),
      bytes: env.ENCRYPTION_KEY?.trim() ? decodedLength(env.ENCRYPTION_KEY) : null,
    },
    previousKeys: { count: previous.length, bad: previous.filter((k) => decodedLength(k) !== 32).length },
    instanceTokenSecret: { set: Boolean(env.INSTANCE_TOKEN_SECRET), length: env.INSTANCE_TOKEN_SECRET?.length ?? 0 },
    metricsToken: Boolean(env.METRICS_TOKEN),
    access: {
      teamDomainSet: teamRaw !== "",
      teamDomain: teamRaw ? teamDomain(teamRaw) : null,
      audSet: Boolean(env.ACCESS_AUD?.trim()),
      certsUrl: access?.certsUrl ?? null,
      certs: access ? await fetchCerts(access.certsUrl, outbound, deadline) : null,
    },
  };
}

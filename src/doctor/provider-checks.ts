import type { ProviderFacts } from "./facts";
import { probeProblem, probeStatus } from "./probe-text";
import { check, type DoctorCheck } from "./report";

/**
 * Each provider shim: does it answer its capabilities call (GET /v1/capabilities, signed like
 * every request) and take our signature, and how long did it take.
 */

export const providerId = (p: Pick<ProviderFacts, "id">) => `provider.shim:${p.id}`;
export const providerSubject = (p: Pick<ProviderFacts, "name">) => `provider ${p.name}`;

/** Answers slower than this delay every pass of the scale sets using the shim. */
export const SLOW_SHIM_MS = 5_000;

export function providerCheck(p: ProviderFacts): DoctorCheck {
  const id = providerId(p);
  const subject = providerSubject(p);
  const cap = p.capabilities;
  if (!cap) return check(id, subject, "skip", "Not asked.");
  const details: Record<string, unknown> = { url: p.url, duration_ms: cap.ms };
  if (!cap.ok) {
    const e = cap.error;
    if (e.kind === "refused" && e.status === 401) {
      return check(id, subject, "fail", `The shim at ${p.url} refused our signature (401${e.message ? `: ${e.message}` : ""}).`, {
        fix:
          `The shim and the coordinator disagree on the secret: edgerunner provider update ${p.name} --secret-from-file FILE ` +
          "(the shim's own secret); or their clocks differ by more than 5 minutes",
        details,
      });
    }
    if (e.kind === "refused" && e.status === 404) {
      return check(id, subject, "fail", `The shim at ${p.url} has no /v1/capabilities (404): is this the shim's base URL?`, {
        fix:
          `edgerunner provider update ${p.name} --shim-url <the shim's base URL, without /v1>; while scale sets use the provider, ` +
          "with a new secret in the same command (--secret-from-file FILE, set on the shim too)",
        details,
      });
    }
    if (e.kind === "unreachable") {
      return check(id, subject, "fail", `The shim at ${p.url} gave ${probeProblem(e)}.`, {
        fix: `Check that the shim runs and that ${p.url} is reachable from Cloudflare (a public https URL; no custom port)`,
        details,
      });
    }
    return check(id, subject, probeStatus(e), `The shim at ${p.url} ${probeProblem(e)}.`, { details });
  }
  const v = cap.value;
  Object.assign(details, { interface_version: v.interfaceVersion, batch_create_max: v.batchMax });
  const batch = v.batchMax > 0 ? `, batch creates of up to ${v.batchMax}` : "";
  if (cap.ms > SLOW_SHIM_MS) {
    return check(id, subject, "warn", `Protocol ${v.interfaceVersion}${batch}, signature accepted, but it took ${cap.ms} ms to answer.`, {
      fix: "A slow shim slows every pass of its scale sets: look at where it runs",
      details,
    });
  }
  return check(id, subject, "ok", `Protocol ${v.interfaceVersion}${batch}; it took our signature and answered in ${cap.ms} ms.`, {
    details,
  });
}

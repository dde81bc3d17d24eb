import type { Probe, ProbeError } from "./facts";
import type { CheckStatus } from "./report";

/** What went wrong with a call, in words for a check's summary (never a secret: messages come from the other side). */
export function probeProblem(error: ProbeError): string {
  switch (error.kind) {
    case "refused":
      return `answered ${error.status}${error.message ? `: ${error.message}` : ""}`;
    case "unreachable":
      return `no answer (${error.message})`;
    case "malformed":
      return `answered something unexpected (${error.message})`;
    case "rate_limited":
      return `rate limited by GitHub until ${error.until}`;
    case "failing":
      return `not asked: the credentials are failing (${error.reason})`;
    case "not_sent":
      return `not sent: ${error.message}`;
    case "out_of_time":
      return "not asked: the report's time budget ran out first";
    case "out_of_subrequests":
      return `not asked: this request had used its ${error.limit} subrequests (the Free plan's limit); check one scale set at a time (edgerunner doctor --scaleset NAME)`;
  }
}

/**
 * The status a failed call earns when nothing more specific applies: a wait GitHub asked for,
 * or our own time budget, says nothing about the setup (skip); no answer at all is a failure.
 */
export function probeStatus(error: ProbeError): CheckStatus {
  if (error.kind === "rate_limited" || error.kind === "out_of_time" || error.kind === "out_of_subrequests" || error.kind === "failing")
    return "skip";
  return "fail";
}

/** A probe's timing, for details. */
export const took = (p: Probe<unknown> | null | undefined) => (p ? { duration_ms: p.ms } : {});

import type { EntityFacts, ScaleSetFacts, UnmatchedJobs } from "./facts";
import { probeProblem } from "./probe-text";
import { type CheckStatus, check, type DoctorCheck, type Finding, fromFindings } from "./report";

/**
 * Each scale set: is every link it stands on working (its entity's credentials and webhook,
 * its provider), has its object stopped creating after failures, has a runner of it ever come
 * up, and which `runs-on:` reaches it. Plus the jobs no scale set took.
 */

/** The verdicts of the links a scale set depends on, from the checks before it. */
export interface Upstream {
  credentials: { name: string; status: CheckStatus };
  access: CheckStatus;
  webhook: CheckStatus;
  provider: { name: string; status: CheckStatus };
}

const forgeWord = (e: EntityFacts | undefined) => ({ github: "GitHub", gitea: "Gitea", forgejo: "Forgejo" })[e?.forge ?? "github"];
const subjectOf = (s: ScaleSetFacts, e: EntityFacts | undefined) => `scale set ${s.name}${e ? ` (${e.kind} ${e.name})` : ""}`;
const iso = (ms: number) => new Date(ms).toISOString();

export function scaleSetReadyCheck(s: ScaleSetFacts, e: EntityFacts | undefined, up: Upstream): DoctorCheck {
  const id = `scaleset.ready:${s.id}`;
  const findings: Finding[] = [];
  const broken = (status: CheckStatus) => status === "fail";
  if (broken(up.credentials.status)) findings.push({ status: "fail", text: `Its credentials ${up.credentials.name} do not work (above).` });
  else if (broken(up.access))
    findings.push({ status: "fail", text: `${forgeWord(e)} will not let its credentials manage the entity's runners (above).` });
  if (s.intake === "webhook" && broken(up.webhook))
    findings.push({ status: "fail", text: "Its jobs cannot reach the coordinator: the entity's webhook fails (above)." });
  if (broken(up.provider.status))
    findings.push({ status: "fail", text: `Its provider ${up.provider.name} fails (above): no machine can be made.` });
  if (!s.enabled) {
    findings.push({ status: "warn", text: "It is paused: it makes no runner.", fix: `edgerunner scaleset resume ${s.name}` });
  }
  const o = s.object;
  const fault = s.lastFault ? ` The last fault (${s.lastFault.instance}, ${iso(s.lastFault.at)}): ${s.lastFault.message}` : "";
  if (o && !o.ok) {
    findings.push({ status: "warn", text: `Its Durable Object did not say how it is doing: ${probeProblem(o.error)}.` });
  } else if (o?.ok) {
    const v = o.value;
    if (v.hardLimitedAt) {
      findings.push({
        status: "fail",
        text: `It stopped creating machines at ${v.hardLimitedAt} after ${v.createFailures} failures in a row.${fault}`,
        fix: `Fix what the fault says, then: edgerunner scaleset reset ${s.name}`,
      });
    } else if (v.createFailures > 0) {
      findings.push({
        status: "warn",
        text: `${v.createFailures} create failure(s) in a row; the next try is after ${v.createAllowedAt ?? "the backoff"}.${fault}`,
        fix: `Look at the fault; edgerunner instance list --scaleset ${s.name} shows the machines`,
      });
    }
    const p = v.poller;
    if (s.intake === "poll" && s.enabled && p && p.failures > 0)
      findings.push({
        status: "warn",
        text: `Its Forgejo poller failed ${p.failures} time(s) in a row${p.lastError ? `: ${p.lastError}` : ""}.`,
        fix: `edgerunner scaleset show ${s.name} (status.poller); edgerunner doctor checks the entity's token above`,
      });
    const l = v.listener;
    if (s.intake === "scaleset_api" && s.enabled) {
      if (!l || l.githubScaleSetId === null) {
        findings.push({
          status: "warn",
          text: `It is not registered at GitHub as a runner scale set yet${l?.lastError ? `: ${l.lastError}` : ""}.`,
          fix: `edgerunner scaleset reconcile ${s.name}, then edgerunner scaleset show ${s.name} (status.listener)`,
        });
      } else if (l.failures > 0) {
        findings.push({
          status: "warn",
          text: `Its listener failed ${l.failures} time(s) in a row${l.lastError ? `: ${l.lastError}` : ""}.`,
          fix: `edgerunner scaleset show ${s.name} (status.listener)`,
        });
      }
    }
  }
  return fromFindings(id, subjectOf(s, e), findings, "Its credentials, provider and job intake all pass.", {
    enabled: s.enabled,
    intake: s.intake,
    ...(o?.ok && { create_failures: o.value.createFailures, hard_limited_at: o.value.hardLimitedAt }),
  });
}

const STUCK_JOB_MS = 10 * 60_000;

export function scaleSetRunnersCheck(s: ScaleSetFacts, e: EntityFacts | undefined, now: number): DoctorCheck {
  const id = `scaleset.runners:${s.id}`;
  const subject = subjectOf(s, e);
  const { total, live, idle } = s.instances;
  const details = {
    instances: total,
    live,
    idle,
    came_up: s.cameUp,
    queued_jobs: s.queued.count,
    oldest_queued_at: s.queued.oldestAt === null ? null : iso(s.queued.oldestAt),
    last_fault: s.lastFault && { ...s.lastFault, at: iso(s.lastFault.at) },
  };
  const waiting = s.queued.count
    ? ` ${s.queued.count} job(s) wait for a runner${s.queued.oldestAt ? ` since ${iso(s.queued.oldestAt)}` : ""}.`
    : "";
  if (s.cameUp) {
    const stuck = s.queued.oldestAt !== null && now - s.queued.oldestAt > STUCK_JOB_MS && idle === 0;
    return check(id, subject, stuck ? "warn" : "ok", `Runners of it have come up (${live} live, ${idle} idle now).${waiting}`, {
      ...(stuck && {
        fix: `Jobs wait longer than 10 minutes: edgerunner scaleset show ${s.name} says why (backoff, max_runners ${s.maxRunners})`,
      }),
      details,
    });
  }
  if (total > 0) {
    const fault = s.lastFault ? ` The last fault (${s.lastFault.instance}): ${s.lastFault.message}` : "";
    return check(id, subject, "warn", `${total} machine(s) were made, and none became a runner yet.${fault}${waiting}`, {
      fix:
        `edgerunner instance list --scaleset ${s.name} and edgerunner instance show NAME show each machine's steps; ` +
        "a machine must reach PUBLIC_URL (/api/v1/metadata) and GitHub to register (docs/bootstrap.md)",
      details,
    });
  }
  if (s.queued.count > 0 || s.minIdleRunners > 0) {
    const why = s.queued.count > 0 ? waiting.trim() : `min_idle_runners is ${s.minIdleRunners}.`;
    return check(id, subject, "warn", `No machine was made yet, though ${why}`, {
      fix: `See why above, or: edgerunner scaleset reconcile ${s.name}`,
      details,
    });
  }
  return check(id, subject, "ok", "No runner was needed yet: it makes one when a job asks for it.", { details });
}

export function scaleSetLabelsCheck(s: ScaleSetFacts, e: EntityFacts | undefined): DoctorCheck {
  const id = `scaleset.labels:${s.id}`;
  const subject = subjectOf(s, e);
  if (s.intake === "scaleset_api") {
    return check(id, subject, "ok", `Jobs with runs-on: ${s.name} reach it (runner scale set API).`, { details: { runs_on: s.name } });
  }
  const scope = e ? ` of ${e.kind} ${e.name}${e.kind === "repository" ? "" : "'s repositories"}` : "";
  return check(id, subject, "ok", `Jobs${scope} whose runs-on labels are all among [${s.labels.join(", ")}] reach it.`, {
    details: { labels: s.labels },
  });
}

export function unmatchedJobsCheck(u: UnmatchedJobs): DoctorCheck {
  const id = "jobs.unmatched";
  const subject = "queued jobs";
  if (u.count === 0) return check(id, subject, "ok", "Every queued job found a scale set.");
  const sets = u.labelSets.map((l) => `[${l.labels.join(", ")}] (${l.count})`).join(", ");
  return check(id, subject, "warn", `${u.count} queued job(s) match no scale set; their runs-on: ${sets}.`, {
    fix: "Give a scale set every label of such a job (edgerunner scaleset update NAME --labels …), or change the workflow's runs-on; edgerunner job list --unmatched lists them",
    details: { count: u.count, label_sets: u.labelSets },
  });
}

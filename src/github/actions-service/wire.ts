/**
 * The Actions service's wire format: answers may start with a UTF-8 byte order mark, errors are
 * `{typeName, message}`, a queue message's body is a JSON array inside a string. Pure functions
 * over bytes and plain data; the client (client.ts) does the HTTP.
 */
import { z } from "zod";
import { fromBase64 } from "../../crypto/base64url";
import type {
  ActionsError,
  JobMessage,
  ListenerSession,
  QueueMessage,
  RunnerScaleSetInfo,
  ScaleSetStatistics,
} from "../../scaleset/actions-port";

const BOM = [0xef, 0xbb, 0xbf];

/** The body as text, without a leading UTF-8 BOM (which JSON.parse would refuse). */
export function decodeBody(bytes: Uint8Array): string {
  const start = bytes.length >= 3 && BOM.every((b, i) => bytes[i] === b) ? 3 : 0;
  // ignoreBOM: keep a second BOM, if any, visible instead of silently eating it too.
  return new TextDecoder("utf-8", { ignoreBOM: true, fatal: false }).decode(bytes.subarray(start));
}

/** JSON.parse of the body, or undefined when it is empty or not JSON. */
export function parseBody(bytes: Uint8Array): unknown {
  const text = decodeBody(bytes);
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

const exceptionSchema = z.object({ typeName: z.string().optional(), message: z.string().optional() });

/**
 * What a failed answer means to the listener. Named exceptions decide first (the service
 * sometimes wraps a conflict or a missing thing in another status), then the status.
 */
export function actionsError(status: number, body: unknown, fallback: string): ActionsError {
  const parsed = exceptionSchema.safeParse(body);
  const typeName = parsed.success ? parsed.data.typeName : undefined;
  const message = (parsed.success && parsed.data.message) || fallback;
  const base = { status, message, ...(typeName && { typeName }) };
  const named = typeName ?? "";
  if (/SessionConflict|AgentExists|ScaleSetExists|JobStillRunning/.test(named)) return { kind: "conflict", ...base };
  if (/NotFound/.test(named)) return { kind: "not_found", ...base };
  if (status === 401 || status === 403) return { kind: "unauthorized", ...base };
  if (status === 409) return { kind: "conflict", ...base };
  if (status === 404) return { kind: "not_found", ...base };
  if (status >= 500 || status === 429 || status === 408) return { kind: "retryable", ...base };
  return { kind: "permanent", ...base };
}

const statisticsSchema = z.object({
  totalAvailableJobs: z.number().default(0),
  totalAcquiredJobs: z.number().default(0),
  totalAssignedJobs: z.number().default(0),
  totalRunningJobs: z.number().default(0),
  totalRegisteredRunners: z.number().default(0),
  totalBusyRunners: z.number().default(0),
  totalIdleRunners: z.number().default(0),
});

export const adminConnectionSchema = z.object({ url: z.string().min(1), token: z.string().min(1) });

export const scaleSetSchema = z
  .object({ id: z.number(), name: z.string(), runnerGroupId: z.number(), labels: z.array(z.object({ name: z.string() })).nullish() })
  .transform(
    (s): RunnerScaleSetInfo => ({ id: s.id, name: s.name, runnerGroupId: s.runnerGroupId, labels: (s.labels ?? []).map((l) => l.name) }),
  );

export const listSchema = <T extends z.ZodType>(item: T) => z.object({ count: z.number(), value: z.array(item).nullish() });

export const runnerGroupSchema = z.object({ id: z.number(), name: z.string() });

export const sessionSchema = z
  .object({
    sessionId: z.string(),
    messageQueueUrl: z.string(),
    messageQueueAccessToken: z.string(),
    statistics: statisticsSchema.nullish(),
  })
  .transform((s): ListenerSession => ({ ...s, statistics: s.statistics ?? null }));

export const jitSchema = z
  .object({ runner: z.object({ id: z.number(), name: z.string() }), encodedJITConfig: z.string().min(1) })
  .transform((j) => ({ runnerId: j.runner.id, encodedJitConfig: j.encodedJITConfig }));

export const agentSchema = z.object({ id: z.number(), name: z.string() });

export const acquiredSchema = z.object({ count: z.number(), value: z.array(z.number()).nullish() }).transform((a) => a.value ?? []);

/** GitHub's zero time (`0001-01-01T00:00:00Z`) and absent times are null. */
const time = z
  .string()
  .nullish()
  .transform((v) => {
    const ms = v ? Date.parse(v) : NaN;
    return Number.isFinite(ms) && ms > 0 ? ms : null;
  });

const jobItemSchema = z
  .object({
    messageType: z.enum(["JobAvailable", "JobAssigned", "JobStarted", "JobCompleted"]),
    runnerRequestId: z.number(),
    repositoryName: z.string().default(""),
    ownerName: z.string().default(""),
    jobId: z.string().default(""),
    jobDisplayName: z.string().default(""),
    workflowRunId: z.number().default(0),
    requestLabels: z.array(z.string()).nullish(),
    queueTime: time,
    runnerAssignTime: time,
    finishTime: time,
    runnerId: z.number().nullish(),
    runnerName: z.string().nullish(),
    result: z.string().nullish(),
  })
  .transform(
    (j): JobMessage => ({
      type: j.messageType,
      runnerRequestId: j.runnerRequestId,
      repository: `${j.ownerName}/${j.repositoryName}`,
      owner: j.ownerName,
      jobId: j.jobId,
      jobDisplayName: j.jobDisplayName,
      workflowRunId: j.workflowRunId,
      requestLabels: j.requestLabels ?? [],
      queueTime: j.queueTime,
      runnerAssignTime: j.runnerAssignTime,
      finishTime: j.finishTime,
      runnerId: j.runnerId || null,
      runnerName: j.runnerName || null,
      result: j.result || null,
    }),
  );

const messageSchema = z.object({
  messageId: z.number(),
  messageType: z.string(),
  body: z.string().nullish(),
  statistics: statisticsSchema.nullish(),
});

/**
 * A polled message. Items of types this coordinator does not know are skipped (the service
 * may add some); a body that is not a JSON array is an error (the message cannot be acted on).
 */
export function parseQueueMessage(raw: unknown): { ok: true; value: QueueMessage } | { ok: false; message: string } {
  const m = messageSchema.safeParse(raw);
  if (!m.success) return { ok: false, message: `malformed message: ${m.error.issues[0]?.message ?? "invalid"}` };
  const statistics: ScaleSetStatistics | null = m.data.statistics ?? null;
  if (m.data.messageType !== "RunnerScaleSetJobMessages" || !m.data.body)
    return { ok: true, value: { messageId: m.data.messageId, statistics, jobs: [] } };
  let items: unknown;
  try {
    items = JSON.parse(m.data.body);
  } catch {
    return { ok: false, message: "message body is not JSON" };
  }
  if (!Array.isArray(items)) return { ok: false, message: "message body is not an array" };
  const jobs = items.flatMap((i) => {
    const parsed = jobItemSchema.safeParse(i);
    return parsed.success ? [parsed.data] : [];
  });
  return { ok: true, value: { messageId: m.data.messageId, statistics, jobs } };
}

/** Unix ms at which a JWT expires (its `exp`, read without verifying), or null. */
export function jwtExpiresAt(token: string): number | null {
  const part = token.split(".")[1];
  if (!part) return null;
  try {
    const exp = (JSON.parse(new TextDecoder().decode(fromBase64(part))) as { exp?: unknown }).exp;
    return typeof exp === "number" ? exp * 1000 : null;
  } catch {
    return null;
  }
}

/**
 * The Actions service's wire format: answers may start with a UTF-8 byte order mark, errors are
 * `{typeName, message}`, a queue message's body is a JSON array inside a string. Pure functions
 * over bytes and plain data; the client (client.ts) does the HTTP.
 */
import { z } from "zod";
import { fromBase64 } from "../../crypto/base64url";
import { PAYLOAD_BOUNDS as B } from "../../intake/payload";
import type {
  ActionsError,
  InvalidJobItem,
  JobMessage,
  JobMessageType,
  ListenerSession,
  QueueMessage,
  RunnerScaleSetInfo,
  ScaleSetStatistics,
} from "../../scaleset/listener/actions-port";

const BOM = [0xef, 0xbb, 0xbf];

/**
 * The most the client reads of any answer (a message, a session, a JIT config, an admin token):
 * GitHub's are a few KB (a message holds tens of jobs); past this an answer is broken or hostile
 * and is refused unread rather than held in the isolate's memory.
 */
export const MAX_ACTIONS_BODY_BYTES = 1024 * 1024;

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
  .max(B.word)
  .nullish()
  .transform((v) => {
    const ms = v ? Date.parse(v) : NaN;
    return Number.isFinite(ms) && ms > 0 ? ms : null;
  });

export const JOB_MESSAGE_TYPES = ["JobAvailable", "JobAssigned", "JobStarted", "JobCompleted"] as const satisfies readonly JobMessageType[];

/** A GitHub id (runner request, workflow run, runner): what D1's INTEGER and JSON numbers both hold exactly. */
const id = z.number().int().positive().max(Number.MAX_SAFE_INTEGER);

/**
 * One job item of a message, with the webhook path's bounds (PAYLOAD_BOUNDS) on every field
 * that reaches D1, so an answer cannot write rows of any size.
 */
const jobItemObject = z.object({
  messageType: z.enum(JOB_MESSAGE_TYPES),
  runnerRequestId: id,
  repositoryName: z.string().max(B.name).default(""),
  ownerName: z.string().max(B.name).default(""),
  jobId: z.string().max(B.name).default(""),
  jobDisplayName: z.string().max(B.title).default(""),
  workflowRunId: z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER).default(0),
  requestLabels: z.array(z.string().max(B.label)).max(B.labels).nullish(),
  queueTime: time,
  runnerAssignTime: time,
  finishTime: time,
  runnerId: z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER).nullish(),
  runnerName: z.string().max(B.runnerName).nullish(),
  result: z.string().max(B.word).nullish(),
});

/** An item whose type and request id failed too can still give what else it carries. */
const salvageObject = jobItemObject.partial({ messageType: true, runnerRequestId: true });

const jobMessageOf = (j: z.output<typeof salvageObject>): Omit<JobMessage, "type" | "runnerRequestId"> => ({
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
});

/** The most problems kept per item (a list of 100 bad labels is 100 issues), and the longest each. */
const MAX_ISSUES = 20;
const MAX_ISSUE_CHARS = 200;

/** Zod's issues as `path: what is wrong`; zod's messages never quote the value, so nothing an answer carries is echoed. */
const problemsOf = (error: z.ZodError, root = "(item)"): string[] =>
  error.issues.slice(0, MAX_ISSUES).map((i) => `${i.path.map(String).join(".") || root}: ${i.message}`.slice(0, MAX_ISSUE_CHARS));

type ItemReading = { kind: "job"; job: JobMessage } | { kind: "invalid"; item: InvalidJobItem } | { kind: "unknown"; type: string };

/**
 * One job item. A known type that fails its schema is kept as an InvalidJobItem: its problems,
 * and whatever of it passed on its own (the fields that failed fall back to empty), so the
 * listener can record it rather than lose it. An item of a type this coordinator does not know
 * (the service may add some) is skipped, as ARC's listener does.
 */
export function readJobItem(raw: unknown): ItemReading {
  const parsed = jobItemObject.safeParse(raw);
  if (parsed.success) {
    const { messageType: type, runnerRequestId } = parsed.data;
    return { kind: "job", job: { type, runnerRequestId, ...jobMessageOf(parsed.data) } };
  }
  const obj = raw !== null && typeof raw === "object" && !Array.isArray(raw) ? (raw as Record<string, unknown>) : null;
  const type = obj?.messageType;
  if (typeof type === "string" && type.length <= B.word && !(JOB_MESSAGE_TYPES as readonly string[]).includes(type))
    return { kind: "unknown", type };
  const failed = new Set(parsed.error.issues.map((i) => i.path[0]));
  const rest = obj ? Object.fromEntries(Object.entries(obj).filter(([k]) => !failed.has(k))) : {};
  const salvaged = salvageObject.safeParse(rest);
  const kept = salvaged.success ? salvaged.data : salvageObject.parse({});
  return {
    kind: "invalid",
    item: {
      type: kept.messageType ?? null,
      runnerRequestId: kept.runnerRequestId ?? null,
      ...jobMessageOf(kept),
      problems: obj ? problemsOf(parsed.error) : ["(item): not an object"],
    },
  };
}

const messageSchema = z.object({
  messageId: id,
  messageType: z.string().max(B.title),
  body: z.string().nullish(),
  statistics: statisticsSchema.nullish(),
});

/**
 * A polled message. Job items are read one by one (readJobItem): valid ones in `jobs`, invalid
 * ones in `invalid`, unknown types counted in `skipped`. A message that cannot be acted on at
 * all (its envelope malformed, its body not a JSON array) is an error, with its id when that
 * much could be read, so it can still be acknowledged.
 */
export function parseQueueMessage(
  raw: unknown,
): { ok: true; value: QueueMessage } | { ok: false; messageId: number | null; message: string } {
  const messageId = id.safeParse((raw as { messageId?: unknown } | null)?.messageId).data ?? null;
  const m = messageSchema.safeParse(raw);
  if (!m.success) return { ok: false, messageId, message: `malformed message: ${problemsOf(m.error, "(message)").slice(0, 3).join("; ")}` };
  const statistics: ScaleSetStatistics | null = m.data.statistics ?? null;
  const value: QueueMessage = { messageId: m.data.messageId, statistics, jobs: [], invalid: [], skipped: [] };
  if (m.data.messageType !== "RunnerScaleSetJobMessages" || !m.data.body) return { ok: true, value };
  let items: unknown;
  try {
    items = JSON.parse(m.data.body);
  } catch {
    return { ok: false, messageId, message: "message body is not JSON" };
  }
  if (!Array.isArray(items)) return { ok: false, messageId, message: "message body is not an array" };
  for (const i of items) {
    const r = readJobItem(i);
    if (r.kind === "job") value.jobs.push(r.job);
    else if (r.kind === "invalid") value.invalid.push(r.item);
    else value.skipped.push(r.type);
  }
  return { ok: true, value };
}

/**
 * The `messageId` at the start of a message too large to read whole (the service writes it
 * first). Only an unquoted top-level key counts: inside the body string its quotes are escaped.
 */
export function messageIdFromHead(head: Uint8Array): number | null {
  const found = /^\s*\{\s*"messageId"\s*:\s*(\d{1,16})\s*[,}]/.exec(decodeBody(head));
  return found ? (id.safeParse(Number(found[1])).data ?? null) : null;
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

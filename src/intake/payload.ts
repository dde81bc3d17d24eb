import { z } from "zod";

/**
 * The parts of GitHub's webhook payloads the coordinator reads. Deliberately lenient:
 * GitHub adds fields and values over time (the published schemas are stricter than
 * reality), so only what we use is required and everything else passes through.
 */

/**
 * The most a signed delivery may carry in the fields we keep: what GitHub itself sends, with
 * room to spare, so a payload signed by a leaked or hostile secret cannot fill D1, the API or
 * the dashboard. Sources: GitHub account names are at most 39 characters and repository names
 * 100; runner label APIs (generate-jitconfig, add labels) take at most 100 labels; runner names
 * are at most 64 characters. GitHub publishes no limit on a label's or a job's name length, so
 * those get generous caps no real workflow reaches. docs/github.md "Payload bounds" lists them.
 */
export const PAYLOAD_BOUNDS = {
  /** Account logins, enterprise slugs, repository names. */
  name: 100,
  labels: 100,
  label: 256,
  runnerName: 256,
  /** Job and workflow names (matrix values make job names long). */
  title: 1024,
  /** Actions, statuses, conclusions, timestamps. */
  word: 64,
} as const;
const B = PAYLOAD_BOUNDS;

const Account = z.object({ login: z.string().min(1).max(B.name) });

/** Who a delivery is about; enough to find the entities whose secrets may have signed it. */
export const DeliverySubject = z.object({
  repository: z
    .object({ name: z.string().min(1).max(B.name), owner: Account })
    .nullish()
    .catch(null),
  organization: Account.nullish().catch(null),
  enterprise: z
    .object({ slug: z.string().min(1).max(B.name) })
    .nullish()
    .catch(null),
  /** Only in deliveries of a GitHub App's webhook: the installation the event belongs to. */
  installation: z.object({ id: z.number().int().positive() }).nullish().catch(null),
  /** `ping`: the hook being set up; an App's own webhook says `type: "App"` and its `app_id`. */
  hook: z
    .object({ type: z.string().max(B.word), app_id: z.number().int().positive() })
    .nullish()
    .catch(null),
});
export type DeliverySubject = z.infer<typeof DeliverySubject>;

const optionalText = (max: number) => z.string().max(max).nullish();
const optionalInt = z.number().int().nullish();

export const WorkflowJobPayload = z.object({
  action: z.string().min(1).max(B.word),
  workflow_job: z.object({
    id: z.number().int().positive(),
    run_id: z.number().int(),
    run_attempt: optionalInt,
    name: optionalText(B.title),
    workflow_name: optionalText(B.title),
    status: z.string().min(1).max(B.word),
    conclusion: optionalText(B.word),
    labels: z.array(z.string().max(B.label)).max(B.labels),
    runner_id: optionalInt,
    runner_name: optionalText(B.runnerName),
    created_at: optionalText(B.word),
    started_at: optionalText(B.word),
    completed_at: optionalText(B.word),
  }),
  repository: z.object({ name: z.string().min(1).max(B.name), owner: Account }),
});

/** Whether a payload failed only by carrying more than PAYLOAD_BOUNDS allow. */
export const onlyOutOfBounds = (error: z.ZodError): boolean => error.issues.length > 0 && error.issues.every((i) => i.code === "too_big");
export type WorkflowJobPayload = z.infer<typeof WorkflowJobPayload>;

/**
 * The JSON object a delivery carries, and the body's text (what the signature covers), or
 * null when the body holds no JSON object.
 */
export function decodeBody(raw: Uint8Array, contentType: string): { text: string; json: unknown } | null {
  const text = new TextDecoder().decode(raw);
  // GitHub's other content type: the JSON is the form field `payload`; the signature still
  // covers the raw body.
  const payload = /^application\/x-www-form-urlencoded\b/i.test(contentType) ? new URLSearchParams(text).get("payload") : text;
  if (payload === null) return null;
  try {
    const json: unknown = JSON.parse(payload);
    return json !== null && typeof json === "object" && !Array.isArray(json) ? { text, json } : null;
  } catch {
    return null;
  }
}

import { Hono, type Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { AppEnv } from "../env";
import { keyringFor } from "../crypto/keyring";
import { countWebhookRejection, recordWorkflowJob } from "../db/delivery-store";
import { afterResponse } from "../http/after-response";
import { ApiError, errorResponse, zodDetails, type ErrorCode } from "../http/errors";
import { BodyTooLarge, readLimitedBody } from "../http/limited-body";
import { loadDirectory, type Directory } from "../intake/directory";
import { jobEventFrom } from "../intake/job-event";
import { DeliverySubject, onlyOutOfBounds, PAYLOAD_BOUNDS, WorkflowJobPayload } from "../intake/payload";
import { inScope, routeJob } from "../intake/routing";
import { deliveryEntities, reporterOf } from "../intake/senders";
import { findSigners } from "../intake/signature";
import { nudgeScaleSet } from "../scaleset/stub";
import { logEvent as log } from "../observability/log";

/**
 * GitHub webhook intake: `POST /webhooks/github`. Authenticity comes from the HMAC
 * signature, not the admin token. The path makes no GitHub or provider call: it reads D1
 * (or its cache), writes one D1 batch, answers, and nudges the scale set's object after
 * the answer.
 */

export const WEBHOOK_PATH = "/webhooks/github";

/** workflow_job payloads are a few KiB; GitHub allows 25 MB, which we have no use for. */
export const MAX_WEBHOOK_BYTES = 1024 * 1024;

const DELIVERY_ID = /^[\x21-\x7e]{1,128}$/;

type Rejection =
  | "missing_headers"
  | "invalid_headers"
  | "payload_too_large"
  | "malformed_json"
  | "unknown_entity"
  | "bad_signature"
  | "invalid_payload"
  | "out_of_bounds";

/** The API error code of each rejection (the reason itself is the finer-grained counter name). */
const REJECTION_CODES: Partial<Record<Rejection, ErrorCode>> = {
  missing_headers: "invalid_parameter",
  invalid_headers: "invalid_parameter",
  malformed_json: "malformed_json",
  unknown_entity: "invalid_signature",
  bad_signature: "invalid_signature",
  invalid_payload: "invalid_body",
  out_of_bounds: "invalid_body",
};

interface Delivery {
  id: string;
  event: string;
}

async function reject(
  c: Context<AppEnv>,
  delivery: Partial<Delivery>,
  status: ContentfulStatusCode,
  reason: Rejection,
  error: string,
  details?: unknown,
): Promise<Response> {
  log({ event: "webhook_rejected", reason, status, delivery_id: delivery.id ?? null, github_event: delivery.event ?? null });
  await countWebhookRejection(c.env.DB, reason);
  return errorResponse(c, new ApiError(status, error, details, { code: REJECTION_CODES[reason] }));
}

function parseBody(raw: Uint8Array, contentType: string): { text: string; json: unknown } | null {
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

export const webhookRoutes = new Hono<AppEnv>().post(WEBHOOK_PATH, async (c) => {
  const receivedAt = Date.now();
  const event = c.req.header("x-github-event")?.trim();
  const id = c.req.header("x-github-delivery")?.trim();
  const signature = c.req.header("x-hub-signature-256")?.trim();
  const delivery = { id, event };

  const missing = [
    ["X-GitHub-Event", event],
    ["X-GitHub-Delivery", id],
    ["X-Hub-Signature-256", signature],
  ]
    .filter(([, v]) => !v)
    .map(([name]) => name);
  if (missing.length) return reject(c, delivery, 400, "missing_headers", "missing webhook headers", { missing });
  if (!DELIVERY_ID.test(id!)) {
    return reject(c, delivery, 400, "invalid_headers", "invalid webhook headers", {
      header: "X-GitHub-Delivery",
      message: "1-128 visible ASCII characters",
    });
  }

  let raw: Uint8Array;
  try {
    raw = await readLimitedBody(c.req.raw, MAX_WEBHOOK_BYTES);
  } catch (err) {
    if (err instanceof BodyTooLarge) {
      return reject(c, delivery, 413, "payload_too_large", "payload too large", { limit_bytes: MAX_WEBHOOK_BYTES });
    }
    throw err;
  }
  const body = parseBody(raw, c.req.header("content-type") ?? "");
  if (!body) return reject(c, delivery, 400, "malformed_json", "malformed JSON body");

  if (event !== "workflow_job" && event !== "ping") {
    log({ event: "webhook_ignored", delivery_id: id, github_event: event });
    return c.json({ ignored: true, reason: `event '${event}' is not handled` }, 202);
  }

  // Authenticity: a registered entity the payload names must have signed it. The payload only
  // says whose secrets to try; the entities whose secret verified are the ones it speaks for.
  const refs = deliveryEntities(DeliverySubject.parse(body.json));
  const enterpriseHost = c.req.header("x-github-enterprise-host")?.trim() || null;
  const keyring = await keyringFor(c.env);
  let directory: Directory = await loadDirectory(c.env.DB, refs, enterpriseHost);
  let signers = await findSigners(keyring, directory.entities, body.text, signature!);
  if (!signers.length && directory.cached) {
    // Maybe an entity or its secret changed since the directory was cached: decide on fresh data.
    directory = await loadDirectory(c.env.DB, refs, enterpriseHost, { fresh: true });
    signers = await findSigners(keyring, directory.entities, body.text, signature!);
  }
  const signer = signers[0];
  if (!signer) {
    return reject(
      c,
      delivery,
      401,
      directory.entities.length ? "bad_signature" : "unknown_entity",
      "unauthorized",
      {
        reason: "no registered repository, organization or enterprise named in this delivery has a webhook secret matching X-Hub-Signature-256",
        endpoint: enterpriseHost ?? "github.com",
      },
    );
  }

  if (event === "ping") {
    log({ event: "webhook_ping", delivery_id: id, entity: signer.id });
    return c.json({ pong: true, entity: { id: signer.id, kind: signer.kind } }, 200);
  }

  const parsed = WorkflowJobPayload.safeParse(body.json);
  if (!parsed.success) {
    if (onlyOutOfBounds(parsed.error)) {
      return reject(c, delivery, 400, "out_of_bounds", "workflow_job payload exceeds what GitHub sends", {
        problems: zodDetails(parsed.error).slice(0, 20),
        bounds: PAYLOAD_BOUNDS,
      });
    }
    return reject(c, delivery, 400, "invalid_payload", "invalid workflow_job payload", zodDetails(parsed.error).slice(0, 20));
  }
  const jobEvent = jobEventFrom(parsed.data);
  if (!jobEvent) {
    log({ event: "webhook_ignored", delivery_id: id, github_event: event, action: parsed.data.action });
    return c.json({ ignored: true, reason: `workflow_job status '${parsed.data.workflow_job.status}' is not handled` }, 202);
  }

  // Only the signers' scale sets, and their parents' where we registered that they may use them.
  const candidates = inScope(directory.scaleSets, signers.map((e) => reporterOf(e, directory.entities)));
  const route = routeJob(jobEvent.labels, candidates);
  const result = await recordWorkflowJob(c.env.DB, {
    deliveryId: id!,
    action: parsed.data.action,
    receivedAt,
    job: { ...jobEvent, entityId: signer.id, scaleSetId: route?.id ?? null },
  });

  if (result.duplicate) {
    log({ event: "webhook_duplicate", delivery_id: id, job_id: jobEvent.id });
    return c.json({ duplicate: true, delivery: id, job_id: jobEvent.id }, 200);
  }

  // One line per accepted delivery: what it said and where the job went.
  log({
    event: "webhook_accepted",
    delivery_id: id,
    github_event: event,
    action: parsed.data.action,
    entity: signer.id,
    job_id: jobEvent.id,
    status: result.status,
    job: result.scaleSetId ? "routed" : "unmatched",
    scale_set: result.scaleSetId,
    labels: jobEvent.labels,
    // The runner that took the job: an instance name when it is one of ours (a job's story goes on under it).
    ...(jobEvent.runnerName && { instance: jobEvent.runnerName }),
  });

  // After the answer: the job is in D1 already, so a failed or lost nudge delays
  // reconciliation until the object's periodic alarm and loses nothing.
  // A job going in_progress asks nothing of its own scale set (its demand only shrank), but a
  // runner of another scale set taking it leaves that scale set one runner short: nudge that one.
  const jobSet = result.status === "in_progress" ? null : result.scaleSetId;
  const runnerSet = result.instanceScaleSetId !== result.scaleSetId || jobSet ? result.instanceScaleSetId : null;
  const targets = new Set([jobSet, runnerSet].filter((s): s is string => s !== null));
  const nudges = [...targets].map((s) => nudgeScaleSet(c.env, s));
  if (nudges.length) {
    const pending = afterResponse(c, Promise.all(nudges));
    if (pending) await pending;
  }

  return c.json(
    {
      delivery: id,
      job_id: jobEvent.id,
      status: result.status,
      scale_set_id: result.scaleSetId,
      matched: result.scaleSetId !== null,
    },
    200,
  );
});

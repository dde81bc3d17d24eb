import { type Context, Hono } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { AppEnv } from "../env";
import { giteaSignature } from "../forges/gitea/delivery";
import { afterResponse } from "../http/after-response";
import { ApiError, type ErrorCode, errorResponse, zodDetails } from "../http/errors";
import { BodyTooLarge, readRequestBody } from "../http/limited-body";
import { PAYLOAD_BOUNDS } from "../intake/payload";
import { type IntakeOutcome, type Rejection, receiveDelivery } from "../intake/receive-delivery";
import { GITEA_WEBHOOK_PATH, WEBHOOK_PATH } from "../lib/webhook-url";
import { logEvent as log } from "../observability/log";
import { countWebhookRejection } from "../observability/op-counters";
import { readRetentionSettings } from "../retention/settings";
import { nudgeAfterWrite } from "../scaleset/stub";

/**
 * Webhook intake: `POST /webhooks/github` and `POST /webhooks/gitea`, one route per forge so a
 * delivery signed for one forge's entity can never reach another's. Authenticity comes from the
 * HMAC signature, not the admin token. Each handler checks its forge's headers and the body's
 * size, hands the delivery to the one intake pipeline (src/intake/receive-delivery.ts), answers
 * with its outcome, and nudges the scale sets' objects after the answer.
 */

/** workflow_job payloads are a few KiB; GitHub allows 25 MB, which we have no use for. */
export const MAX_WEBHOOK_BYTES = 1024 * 1024;

const DELIVERY_ID = /^[\x21-\x7e]{1,128}$/;

/** How each rejection is answered (the reason itself is the finer-grained counter name). */
const REJECTIONS: Record<Rejection, { status: ContentfulStatusCode; code?: ErrorCode; error: string }> = {
  missing_headers: { status: 400, code: "invalid_parameter", error: "missing webhook headers" },
  invalid_headers: { status: 400, code: "invalid_parameter", error: "invalid webhook headers" },
  payload_too_large: { status: 413, error: "payload too large" },
  malformed_json: { status: 400, code: "malformed_json", error: "malformed JSON body" },
  unknown_entity: { status: 401, code: "invalid_signature", error: "unauthorized" },
  bad_signature: { status: 401, code: "invalid_signature", error: "unauthorized" },
  invalid_payload: { status: 400, code: "invalid_body", error: "invalid workflow_job payload" },
  out_of_bounds: { status: 400, code: "invalid_body", error: "workflow_job payload exceeds what GitHub sends" },
  job_too_old: { status: 422, code: "unprocessable", error: "workflow job is older than the retention window" },
};

/** Field problems listed in a rejection, at most. */
const MAX_PROBLEMS = 20;

function reject(c: Context<AppEnv>, delivery: { id?: string; event?: string }, reason: Rejection, details?: unknown): Response {
  const { status, code, error } = REJECTIONS[reason];
  log({ event: "webhook_rejected", reason, status, delivery_id: delivery.id ?? null, github_event: delivery.event ?? null });
  // Counted in memory: a refused request, which anyone can send, writes nothing to D1.
  countWebhookRejection(reason);
  return errorResponse(c, new ApiError(status, error, details, { code }));
}

function rejectionDetails({ reason, details, problems }: Extract<IntakeOutcome, { kind: "rejected" }>): unknown {
  if (!problems) return details;
  const listed = zodDetails(problems).slice(0, MAX_PROBLEMS);
  return reason === "out_of_bounds" ? { problems: listed, bounds: PAYLOAD_BOUNDS } : listed;
}

/**
 * The body, or the 413 answer when it is over MAX_WEBHOOK_BYTES: nothing past the limit is kept,
 * and the rest is read and dropped first, so the sender reads the 413 rather than a reset.
 */
async function readBody(c: Context<AppEnv>, delivery: { id?: string; event?: string }): Promise<Uint8Array | Response> {
  try {
    return await readRequestBody(c.req.raw, MAX_WEBHOOK_BYTES);
  } catch (err) {
    if (err instanceof BodyTooLarge) return reject(c, delivery, "payload_too_large", { limit_bytes: MAX_WEBHOOK_BYTES });
    throw err;
  }
}

export const webhookRoutes = new Hono<AppEnv>()
  .post(WEBHOOK_PATH, async (c) => {
    const receivedAt = Date.now();
    const event = c.req.header("x-github-event")?.trim();
    const id = c.req.header("x-github-delivery")?.trim();
    const signature = c.req.header("x-hub-signature-256")?.trim();
    const delivery = { id, event };

    if (!event || !id || !signature) {
      const missing = [
        ["X-GitHub-Event", event],
        ["X-GitHub-Delivery", id],
        ["X-Hub-Signature-256", signature],
      ]
        .filter(([, v]) => !v)
        .map(([name]) => name);
      return reject(c, delivery, "missing_headers", { missing });
    }
    if (!DELIVERY_ID.test(id)) {
      return reject(c, delivery, "invalid_headers", { header: "X-GitHub-Delivery", message: "1-128 visible ASCII characters" });
    }

    const body = await readBody(c, delivery);
    if (body instanceof Response) return body;

    const outcome = await receiveDelivery(c.env, {
      id,
      event,
      signature,
      enterpriseHost: c.req.header("x-github-enterprise-host")?.trim() || null,
      contentType: c.req.header("content-type") ?? "",
      body,
      receivedAt,
      retentionDays: readRetentionSettings(c.env).settings.retentionDays,
    });
    return answer(c, { id, event }, outcome);
  })
  .post(GITEA_WEBHOOK_PATH, async (c) => {
    // Gitea's headers (services/webhook/deliver.go); it also sends GitHub's names, which this route ignores.
    const receivedAt = Date.now();
    const event = c.req.header("x-gitea-event")?.trim();
    const id = c.req.header("x-gitea-delivery")?.trim();
    const rawSignature = c.req.header("x-gitea-signature")?.trim();
    const delivery = { id, event };
    if (!event || !id || !rawSignature) {
      const missing = [
        ["X-Gitea-Event", event],
        ["X-Gitea-Delivery", id],
        ["X-Gitea-Signature", rawSignature],
      ]
        .filter(([, v]) => !v)
        .map(([name]) => name);
      return reject(c, delivery, "missing_headers", {
        missing,
        next: "set a secret on the Gitea webhook: without one Gitea sends no signature",
      });
    }
    if (!DELIVERY_ID.test(id)) {
      return reject(c, delivery, "invalid_headers", { header: "X-Gitea-Delivery", message: "1-128 visible ASCII characters" });
    }
    const signature = giteaSignature(rawSignature);
    if (!signature) {
      return reject(c, delivery, "invalid_headers", { header: "X-Gitea-Signature", message: "the HMAC-SHA256 of the body, 64 hex digits" });
    }
    const body = await readBody(c, delivery);
    if (body instanceof Response) return body;
    const outcome = await receiveDelivery(c.env, {
      forge: "gitea",
      id,
      event,
      signature,
      hookTarget: c.req.header("x-gitea-hook-installation-target-type")?.trim().toLowerCase() || null,
      enterpriseHost: null,
      contentType: c.req.header("content-type") ?? "",
      body,
      receivedAt,
      retentionDays: readRetentionSettings(c.env).settings.retentionDays,
    });
    return answer(c, { id, event }, outcome);
  });

/** The pipeline's outcome as the HTTP answer, the same for every forge's route. */
async function answer(c: Context<AppEnv>, delivery: { id: string; event: string }, outcome: IntakeOutcome): Promise<Response> {
  const { id } = delivery;
  switch (outcome.kind) {
    case "rejected":
      return reject(c, delivery, outcome.reason, rejectionDetails(outcome));
    case "ignored":
      return c.json({ ignored: true, reason: outcome.reason }, 202);
    case "pong":
      return c.json(
        {
          pong: true,
          entity: outcome.entity,
          // An App's own webhook pings for the App, not for an entity.
          ...(outcome.credentials && { credentials: { id: outcome.credentials.id, app_id: outcome.credentials.appId } }),
        },
        200,
      );
    case "installation":
      return c.json({ installation: outcome.installationId, app_id: outcome.appId, status: outcome.status }, 200);
    case "duplicate":
      return c.json({ duplicate: true, delivery: id, job_id: outcome.jobId }, 200);
    case "accepted": {
      // After the answer: the job is in D1 already, so a failed or lost nudge delays
      // reconciliation until the object's periodic alarm and loses nothing. Shared with the
      // isolate's other deliveries for the same scale set (stub.ts nudgeAfterWrite).
      const nudges = outcome.nudge.map((s) => nudgeAfterWrite(c.env, s));
      if (nudges.length) {
        const pending = afterResponse(c, Promise.all(nudges));
        if (pending) await pending;
      }
      return c.json(
        {
          delivery: id,
          job_id: outcome.jobId,
          status: outcome.status,
          scale_set_id: outcome.scaleSetId,
          matched: outcome.scaleSetId !== null,
        },
        200,
      );
    }
  }
}

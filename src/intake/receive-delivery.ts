import { keyringFor } from "../crypto/keyring";
import type { Keyring } from "../crypto/secret-box";
import { secretContext } from "../crypto/secret-contexts";
import { createDb } from "../db/client";
import { giteaInstanceKeys } from "../db/directory/directory-store";
import { listEndpoints } from "../db/github/github-endpoint-store";
import type { Env } from "../env";
import { giteaDeliveryHost, withoutZeroTimes } from "../forges/gitea/delivery";
import { DEFAULT_ENDPOINT } from "../github/default-endpoint";
import { logEvent as log } from "../observability/log";
import { acceptWorkflowJob } from "./accept-job";
import { type AppHook, appHookCandidates, appSigners } from "./app-hooks";
import { type Directory, loadDirectory } from "./directory";
import { endpointOfDelivery, receiveInstallationEvent } from "./installation-events";
import type { IntakeOutcome } from "./outcome";
import { DeliverySubject, decodeBody } from "./payload";
import { type DeliveryOrigin, deliveryEntities, type EntityRef, type SenderEntity } from "./senders";
import { findSigners } from "./signature";

/**
 * The path from a webhook delivery to a routed job: decode, authenticate, parse, route, store.
 * It makes no GitHub or provider call: it reads the directory from D1 (or the isolate's cache),
 * writes one D1 batch, and says which scale sets to nudge; the HTTP handler answers first and
 * nudges after.
 */

export type { IntakeOutcome, Rejection } from "./outcome";

/** A delivery whose headers and size the HTTP handler has checked. */
export interface Delivery {
  /**
   * The route it came in on: POST /webhooks/github or POST /webhooks/gitea (absent: github). Only
   * entities on that forge's endpoints may have signed it.
   */
  forge?: "github" | "gitea";
  /** X-GitHub-Delivery (X-Gitea-Delivery). */
  id: string;
  /** X-GitHub-Event (X-Gitea-Event). */
  event: string;
  /** X-Hub-Signature-256, or X-Gitea-Signature put in its `sha256=<hex>` form. */
  signature: string;
  /** Gitea: X-Gitea-Hook-Installation-Target-Type; `system` is the instance's own hook, which only an instance entity may have signed. */
  hookTarget?: string | null;
  /** X-GitHub-Enterprise-Host: the GitHub Enterprise Server that sent it; null for github.com. */
  enterpriseHost: string | null;
  contentType: string;
  body: Uint8Array;
  receivedAt: number;
  /** RETENTION_DAYS: a job created longer ago than this may advance its row but never create one. */
  retentionDays: number;
}

export async function receiveDelivery(
  env: Pick<Env, "DB" | "ENCRYPTION_KEY" | "ENCRYPTION_KEYS_PREVIOUS">,
  delivery: Delivery,
): Promise<IntakeOutcome> {
  const { id, event, signature, enterpriseHost } = delivery;
  const forge = delivery.forge ?? "github";
  const decoded = decodeBody(delivery.body, delivery.contentType);
  if (!decoded) return { kind: "rejected", reason: "malformed_json" };
  // Gitea's payload is GitHub's shape but for the times a job has not reached; the signature still covers the raw body.
  const body = forge === "gitea" ? { ...decoded, json: withoutZeroTimes(decoded.json) } : decoded;
  const signatureHeader = forge === "gitea" ? "X-Gitea-Signature" : "X-Hub-Signature-256";

  if (forge === "github" && (event === "installation" || event === "installation_repositories")) {
    const endpointName = enterpriseHost ? endpointOfDelivery(await listEndpoints(createDb(env)), enterpriseHost) : DEFAULT_ENDPOINT;
    const outcome = await receiveInstallationEvent(env, { id, event, proof: { signature, body: delivery.body }, endpointName }, body.json);
    if (outcome.kind === "rejected") {
      return {
        kind: "rejected",
        reason: "bad_signature",
        details: { reason: "the App this installation delivery names has a different webhook secret than X-Hub-Signature-256" },
      };
    }
    return outcome;
  }
  // Gitea has no ping: its test delivery is a push, ignored like any event we do not handle.
  if (event !== "workflow_job" && (event !== "ping" || forge === "gitea")) {
    log({ event: "webhook_ignored", delivery_id: id, github_event: event });
    return { kind: "ignored", reason: `event '${event}' is not handled` };
  }

  // Authenticity: a registered entity the payload names must have signed it, with its own
  // webhook secret or through its App's (see app-hooks.ts). The payload only says whose secrets
  // to try; the entities whose secret verified are the ones it speaks for.
  const subject = DeliverySubject.parse(body.json);
  const refs: EntityRef[] = deliveryEntities(subject);
  if (forge === "gitea" && delivery.hookTarget === "system") {
    // A system hook's payload names no instance: every instance entity on a Gitea endpoint is a candidate signer.
    for (const lookupKey of await giteaInstanceKeys(env.DB)) refs.push({ kind: "enterprise", lookupKey });
  }
  const origin: DeliveryOrigin =
    forge === "gitea" ? { forge: "gitea", host: giteaDeliveryHost(body.json) } : { forge: "github", enterpriseHost };
  const keyring = await keyringFor(env);
  const appPing = event === "ping" && subject.hook?.type === "App";
  let directory = await loadDirectory(env.DB, refs, origin, { app: appPing });
  let verified = await verify(keyring, directory, subject, delivery.body, signature);
  if (!verified.signers.length && directory.cached) {
    // Maybe an entity or its secret changed since the directory was cached: decide on fresh data.
    directory = await loadDirectory(env.DB, refs, origin, { fresh: true, app: appPing });
    verified = await verify(keyring, directory, subject, delivery.body, signature);
  }
  const { signers, apps } = verified;
  const signer = signers[0];
  if (event === "ping" && (signer || apps[0])) {
    log({ event: "webhook_ping", delivery_id: id, entity: signer?.id ?? null, credentials: signer ? null : apps[0]!.id });
    return {
      kind: "pong",
      entity: signer ? { id: signer.id, kind: signer.kind } : null,
      credentials: signer ? null : { id: apps[0]!.id, appId: apps[0]!.appId },
    };
  }
  if (!signer && apps.length) {
    // An App's webhook carries every repository of every installation, ours or not: a genuine
    // delivery about nothing registered here is turned down quietly (a 4xx would fill the App's
    // delivery log with failures), and speaks for nobody.
    const installation = subject.installation?.id ?? null;
    log({ event: "webhook_ignored", delivery_id: id, github_event: event, credentials: apps.map((a) => a.id), installation });
    return {
      kind: "ignored",
      reason: `signed by a GitHub App's webhook, but no registered repository or organization named in it acts through installation ${installation}`,
    };
  }
  if (!signer) {
    return {
      kind: "rejected",
      reason: directory.entities.length ? "bad_signature" : "unknown_entity",
      details: {
        reason:
          forge === "gitea"
            ? `no repository, organization or instance registered on a Gitea endpoint at this delivery's host has a webhook secret matching ${signatureHeader}`
            : `no registered repository, organization or enterprise named in this delivery, nor any GitHub App credential, has a webhook secret matching ${signatureHeader}`,
        endpoint: origin.forge === "gitea" ? origin.host : (enterpriseHost ?? DEFAULT_ENDPOINT),
      },
    };
  }

  return acceptWorkflowJob(env, {
    deliveryId: id,
    json: body.json,
    receivedAt: delivery.receivedAt,
    retentionDays: delivery.retentionDays,
    directory,
    signers,
  });
}

/**
 * Who signed a delivery: the named entities whose own webhook secret verified it, and those
 * acting through an App credential whose webhook secret did (for the payload's installation),
 * most specific first; and the App credentials that verified it, whether or not they speak for
 * an entity here.
 */
async function verify(
  keyring: Keyring,
  directory: Directory,
  subject: DeliverySubject,
  body: Uint8Array,
  signature: string,
): Promise<{ signers: SenderEntity[]; apps: AppHook[] }> {
  const byHook = await findSigners(keyring, directory.entities, body, signature);
  const apps = await findSigners(keyring, appHookCandidates(directory.appHooks, subject), body, signature, (a) =>
    secretContext.appWebhookSecret(a.id),
  );
  const byApp = appSigners(directory.entities, apps, subject.installation?.id ?? null);
  const signers = directory.entities.filter((e) => byHook.includes(e) || byApp.includes(e));
  return { signers, apps };
}

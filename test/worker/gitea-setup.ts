import { exports } from "cloudflare:workers";
import { expect } from "vitest";
import { type ApiResponse, api, readAnswer } from "./helpers";
import { newDeliveryId } from "./webhook-setup";

/** Gitea's X-Gitea-Signature: the HMAC-SHA256 of the raw body, hex, no prefix. */
export async function giteaSign(secret: string, body: string): Promise<string> {
  const key = await crypto.subtle.importKey("raw", new TextEncoder().encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(body)));
  return [...mac].map((b) => b.toString(16).padStart(2, "0")).join("");
}

export interface GiteaSendOptions {
  event?: string;
  delivery?: string;
  /** Sent as X-Gitea-Signature instead of the body's (null: none). */
  signature?: string | null;
  /** X-Gitea-Hook-Installation-Target-Type (default repository). */
  target?: string;
  /** The route (default /webhooks/gitea). */
  path?: string;
  headers?: Record<string, string>;
}

/** Delivers a webhook the way Gitea does (services/webhook/deliver.go): JSON body, its headers, signed with the hook's secret. */
export async function giteaDeliver(payload: unknown, secret: string, opts: GiteaSendOptions = {}): Promise<ApiResponse> {
  const body = JSON.stringify(payload);
  const id = opts.delivery ?? newDeliveryId();
  const event = opts.event ?? "workflow_job";
  const signature = opts.signature === undefined ? await giteaSign(secret, body) : opts.signature;
  const headers: Record<string, string> = {
    "content-type": "application/json",
    "x-gitea-delivery": id,
    "x-gitea-event": event,
    "x-gitea-event-type": event,
    "x-gitea-hook-installation-target-type": opts.target ?? "repository",
    "x-gogs-delivery": id,
    "x-gogs-event": event,
    "x-github-delivery": id,
    "x-github-event": event,
    ...(signature !== null && {
      "x-gitea-signature": signature,
      "x-gogs-signature": signature,
      "x-hub-signature-256": `sha256=${signature}`,
    }),
    ...opts.headers,
  };
  const res = await exports.default.fetch(
    new Request(`https://edgerunner.test${opts.path ?? "/webhooks/gitea"}`, { method: "POST", headers, body }),
  );
  return readAnswer(res);
}

/** A Gitea endpoint, token credentials on it, and a provider: what a Gitea entity needs. */
export async function giteaEndpoint(name: string, host: string): Promise<{ endpoint: string; credentials: string }> {
  const e = await api.post("/api/v1/github/endpoints", { name, forge: "gitea", base_url: `http://${host}` });
  expect(e.status, e.text).toBe(201);
  const credentials = `${name}-token`;
  const c = await api.post("/api/v1/github/credentials", {
    name: credentials,
    endpoint: name,
    auth_type: "pat",
    pat: { oauth2_token: "gitea-token" },
  });
  expect(c.status, c.text).toBe(201);
  return { endpoint: name, credentials };
}

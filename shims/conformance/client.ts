import { ShimHeaders } from "../../src/providers/shim-protocol.ts";
import { requestTarget, signRequest } from "../../src/providers/shim-signing.ts";

/**
 * The kit's raw HTTP to a shim: requests signed as the coordinator signs them, or broken on
 * purpose (no signature, another secret, another time, another path, another body), with the
 * answer kept whole so a check can look at its exact status.
 */

export interface Answer {
  status: number;
  text: string;
  /** The body parsed as JSON, or undefined. */
  json: unknown;
}

export interface SendOptions {
  body?: unknown;
  /** Sent as is instead of `body`. */
  raw?: string;
  pool?: string;
  controller?: string;
  extraSpecs?: unknown;
  /** Sign with this secret instead. */
  secret?: string;
  /** Sign as of this time (unix ms). */
  at?: number;
  /** Sign this request target instead of the real one. */
  signPath?: string;
  /** Sign this body instead of the one sent. */
  signBody?: string;
  /** Drop these headers (e.g. the signature, a pool header). */
  omit?: string[];
  /** Replace the signature with this value. */
  signature?: string;
  /** Set these headers last (after signing). */
  headers?: Record<string, string>;
}

export interface ShimTarget {
  url: string;
  secret: string;
  controllerId: string;
  timeoutMs: number;
}

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64");

export async function send(t: ShimTarget, method: string, path: string, o: SendOptions = {}): Promise<Answer> {
  const url = new URL(t.url.replace(/\/+$/, "") + path);
  const body = o.raw ?? (o.body === undefined ? "" : JSON.stringify(o.body));
  const signed = await signRequest(
    o.secret ?? t.secret,
    { method, pathWithQuery: o.signPath ?? requestTarget(url), body: o.signBody ?? body },
    o.at ?? Date.now(),
  );
  const headers: Record<string, string> = {
    accept: "application/json",
    [ShimHeaders.controllerId]: o.controller ?? t.controllerId,
    [ShimHeaders.poolExtraSpecs]: b64(o.extraSpecs ?? {}),
    ...signed,
    ...(body ? { "content-type": "application/json" } : {}),
  };
  if (o.pool !== undefined) headers[ShimHeaders.poolId] = o.pool;
  if (o.signature !== undefined) headers[ShimHeaders.signature] = o.signature;
  for (const name of o.omit ?? []) delete headers[name];
  Object.assign(headers, o.headers);
  const res = await fetch(url, { method, headers, body: body || undefined, redirect: "manual", signal: AbortSignal.timeout(t.timeoutMs) });
  const text = await res.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.status, text, json };
}

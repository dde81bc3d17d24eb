/**
 * GitHub's record of webhook deliveries, per hook, and the one way the fake GitHub sends one.
 *
 * GitHub makes ONE attempt per delivery: a POST that must be answered 2xx within 10 s (30 s on
 * GHES); anything else is recorded as failed, and GitHub never sends it again by itself. Its docs
 * tell integrators to list recent deliveries and redeliver the failed ones; a redelivery is a new
 * delivery (new id, the same GUID, headers and body, `redelivery: true`) to the hook's current
 * URL, refused for deliveries older than 3 days (7 on GHES). deliveries-rest.ts serves the REST
 * API over this record; every delivery the fake makes (workflow_job to the configured delivery,
 * to the world's hooks and to Apps' hooks; App installation events) goes through `deliver`.
 *
 * Hooks are keyed `hook:<id>` (a hook in world.hooks, or the configured delivery's own hook that
 * no listing shows) or `app:<app id>` (a GitHub App's webhook). Plain web APIs only (fetch), like
 * world.ts, which seeds deliveries and joins the REST routes; each world's share lives here,
 * keyed by the world.
 */
import type { HookDeliveryRecord, SeedHookDelivery } from "./types.ts";
import type { World } from "./world.ts";

export type HookKey = `hook:${number}` | `app:${number}`;
export const hookKey = (id: number): HookKey => `hook:${id}`;
export const appKey = (appId: number): HookKey => `app:${appId}`;

/** GitHub's wait for the answer on github.com (GHES: 30 s, DeliveryConfig.timeout_ms). */
export const DEFAULT_TIMEOUT_MS = 10_000;
const DAY_MS = 24 * 60 * 60_000;
/** How old a delivery may be and still be redelivered: 3 days on github.com, 7 on GHES. */
export const REDELIVERABLE_MS = { github: 3 * DAY_MS, ghes: 7 * DAY_MS };

/**
 * What the fake's own records of a delivery count (RecordedDelivery, AppEventDelivery): every
 * attempt at it, redeliveries included, updates them.
 */
export interface Tally {
  attempts: number;
  status: number | null;
  acked_at?: number | null;
}

/** The outcome of one POST, in GitHub's words. */
export interface Outcome {
  status_code: number;
  status: string;
  /** Seconds. */
  duration: number;
  response: { headers: Record<string, string>; payload: string | null };
}

interface StoredDelivery {
  id: number;
  key: HookKey;
  guid: string;
  deliveredAt: number;
  redelivery: boolean;
  outcome: Outcome;
  event: string;
  action: string | null;
  installation_id: number | null;
  repository_id: number | null;
  url: string;
  /** As sent. */
  headers: Record<string, string>;
  body: string;
  /** The payload's JSON text (the body itself for JSON hooks). */
  payload: string;
  tally: Tally | null;
}

interface Share {
  byId: Map<number, StoredDelivery>;
  byKey: Map<HookKey, StoredDelivery[]>;
  /** Where a hook that is not in world.hooks delivers now (the configured delivery, an App's hook). */
  targets: Map<HookKey, { url: string; timeoutMs: number }>;
  inflight: Set<Promise<unknown>>;
}

const shares = new WeakMap<World, Share>();
function share(w: World): Share {
  let s = shares.get(w);
  if (!s) {
    s = { byId: new Map(), byKey: new Map(), targets: new Map(), inflight: new Set() };
    shares.set(w, s);
  }
  return s;
}

const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");

const phrase = (code: number) => (code >= 200 && code < 300 ? "OK" : code === 0 ? "timed out" : `Invalid HTTP Response: ${code}`);

/** Makes one POST, within `timeoutMs` (the answer's body included); never throws. */
export async function postDelivery(
  url: string,
  headers: Record<string, string>,
  body: string,
  timeoutMs = DEFAULT_TIMEOUT_MS,
): Promise<Outcome> {
  const started = Date.now();
  const seconds = () => Math.round(Date.now() - started) / 1000;
  try {
    // GitHub does not follow redirects: a 3xx is an answer, and not a 2xx.
    const res = await fetch(url, { method: "POST", headers, body, redirect: "manual", signal: AbortSignal.timeout(timeoutMs) });
    const payload = await res.text();
    const responseHeaders: Record<string, string> = {};
    res.headers.forEach((v, k) => {
      responseHeaders[k] = v;
    });
    return { status_code: res.status, status: phrase(res.status), duration: seconds(), response: { headers: responseHeaders, payload } };
  } catch (err) {
    const timedOut = err instanceof Error && (err.name === "TimeoutError" || err.name === "AbortError");
    return {
      status_code: 0,
      status: timedOut ? "timed out" : "failed to connect to host",
      duration: seconds(),
      response: { headers: {}, payload: null },
    };
  }
}

/** A delivery GitHub recorded as failed without reaching the receiver (DeliveryConfig.drop_probability). */
const DROPPED: Outcome = { status_code: 0, status: "failed to connect to host", duration: 0, response: { headers: {}, payload: null } };

export interface Send {
  key: HookKey;
  url: string;
  timeoutMs?: number;
  event: string;
  guid: string;
  headers: Record<string, string>;
  body: string;
  /** The payload's JSON text. */
  payload: string;
  redelivery?: boolean;
  /** Recorded as failed, not sent. */
  dropped?: boolean;
  tally?: Tally | null;
}

function fieldsOf(payload: string): Pick<StoredDelivery, "action" | "installation_id" | "repository_id"> {
  let p: { action?: unknown; installation?: { id?: unknown }; repository?: { id?: unknown } } = {};
  try {
    p = JSON.parse(payload) ?? {};
  } catch {
    // Not JSON: GitHub's record shows no action, installation or repository.
  }
  const num = (v: unknown) => (typeof v === "number" ? v : null);
  return {
    action: typeof p.action === "string" ? p.action : null,
    installation_id: num(p.installation?.id),
    repository_id: num(p.repository?.id),
  };
}

function store(s: Share, d: StoredDelivery) {
  s.byId.set(d.id, d);
  const list = s.byKey.get(d.key) ?? [];
  list.push(d);
  s.byKey.set(d.key, list);
}

/**
 * Makes one delivery (one POST, or none when `dropped`) and records it under its hook once it has
 * an outcome; its id is taken when it starts, so ids follow the order deliveries were made in.
 */
export function deliver(w: World, send: Send): Promise<HookDeliveryRecord> {
  const s = share(w);
  const id = w.newId();
  const deliveredAt = w.now();
  const done = (async () => {
    const outcome = send.dropped ? DROPPED : await postDelivery(send.url, send.headers, send.body, send.timeoutMs);
    const d: StoredDelivery = {
      id,
      key: send.key,
      guid: send.guid,
      deliveredAt,
      redelivery: send.redelivery ?? false,
      outcome,
      event: send.event,
      ...fieldsOf(send.payload),
      url: send.url,
      headers: send.headers,
      body: send.body,
      payload: send.payload,
      tally: send.tally ?? null,
    };
    store(s, d);
    if (d.tally) {
      if (!send.dropped) d.tally.attempts++;
      d.tally.status = outcome.status_code;
      if ("acked_at" in d.tally) d.tally.acked_at = Date.now();
    }
    return fullView(d);
  })();
  const tracked = done.finally(() => s.inflight.delete(tracked));
  s.inflight.add(tracked);
  return done;
}

/** Where the hook keyed `key` delivers now (a hook not in world.hooks: the configured delivery, an App's hook). */
export function setTarget(w: World, key: HookKey, url: string, timeoutMs = DEFAULT_TIMEOUT_MS) {
  share(w).targets.set(key, { url, timeoutMs });
}

function currentTarget(w: World, d: StoredDelivery): { url: string; timeoutMs: number } {
  const known = share(w).targets.get(d.key);
  const hook = d.key.startsWith("hook:") ? w.hooks.get(Number(d.key.slice("hook:".length))) : undefined;
  return { url: hook?.config.url ?? known?.url ?? d.url, timeoutMs: known?.timeoutMs ?? DEFAULT_TIMEOUT_MS };
}

export type Redelivery =
  | { status: 202; done: Promise<HookDeliveryRecord> }
  | { status: 404; message: string }
  | { status: 422; message: string };

/**
 * Redelivers delivery `id` of the hook keyed `key` (the REST attempts routes, and the operator
 * the configured delivery's `retry` plays): the same headers and body, once, to the hook's
 * current URL, recorded as a new delivery. 404 for a delivery of another hook; 422 for one older
 * than `maxAgeMs` on the fake's clock.
 */
export function redeliver(w: World, key: HookKey, id: number, maxAgeMs = REDELIVERABLE_MS.github): Redelivery {
  const d = share(w).byId.get(id);
  if (!d || d.key !== key) return { status: 404, message: "Not Found" };
  if (w.now() - d.deliveredAt > maxAgeMs) return { status: 422, message: "This delivery is too old to be redelivered" };
  const target = currentTarget(w, d);
  const done = deliver(w, {
    key,
    url: target.url,
    timeoutMs: target.timeoutMs,
    event: d.event,
    guid: d.guid,
    headers: d.headers,
    body: d.body,
    payload: d.payload,
    redelivery: true,
    tally: d.tally,
  });
  return { status: 202, done };
}

/** GitHub's record of a hook's deliveries (`Seed.hooks[].deliveries`, `Seed.app_hooks[].deliveries`), oldest first by time. */
export function seedDeliveries(w: World, key: HookKey, url: string, seeds: SeedHookDelivery[], installationId: number | null) {
  const s = share(w);
  const at = (d: SeedHookDelivery) => (d.delivered_at ? Date.parse(d.delivered_at) : w.now());
  for (const seed of [...seeds].sort((a, b) => at(a) - at(b))) {
    const guid = crypto.randomUUID();
    const event = seed.event ?? "workflow_job";
    const action = seed.action === undefined ? "queued" : seed.action;
    const payload = JSON.stringify({
      ...(action !== null && { action }),
      ...(installationId !== null && { installation: { id: installationId } }),
    });
    store(s, {
      id: w.newId(),
      key,
      guid,
      deliveredAt: at(seed),
      redelivery: false,
      outcome: {
        status_code: seed.status_code,
        status: seed.status ?? phrase(seed.status_code),
        duration: 0.12,
        response: { headers: {}, payload: null },
      },
      event,
      action,
      installation_id: installationId,
      repository_id: null,
      url,
      headers: { "content-type": "application/json", "x-github-event": event, "x-github-delivery": guid },
      body: payload,
      payload,
      tally: null,
    });
  }
}

/** A hook's deliveries, newest first (by id, as GitHub lists them), as GitHub lists them (`simple-webhook-delivery`). */
export function listDeliveries(w: World, key: HookKey) {
  return [...(share(w).byKey.get(key) ?? [])].sort((a, b) => b.id - a.id).map(simpleView);
}

/** Every delivery in full, newest first: a hook's (`key`), or the world's (GET /_fake/hook-deliveries). */
export function deliveryRecords(w: World, key: HookKey | null): HookDeliveryRecord[] {
  const s = share(w);
  const all = key === null ? [...s.byId.values()] : (s.byKey.get(key) ?? []);
  return [...all].sort((a, b) => b.id - a.id).map(fullView);
}

/** One delivery of the hook keyed `key`, or null. */
export function deliveryOf(w: World, key: HookKey, id: number): HookDeliveryRecord | null {
  const d = share(w).byId.get(id);
  return d && d.key === key ? fullView(d) : null;
}

/** The hook a delivery id belongs to (for the control route, which names no hook). */
export const keyOfDelivery = (w: World, id: number): HookKey | null => share(w).byId.get(id)?.key ?? null;

/** Resolves once no delivery is under way (redeliveries included). */
export async function settleDeliveries(w: World): Promise<void> {
  const s = share(w);
  while (s.inflight.size) await Promise.all([...s.inflight]);
}

function fullView(d: StoredDelivery): HookDeliveryRecord {
  let payload: Record<string, unknown> | null = null;
  try {
    payload = JSON.parse(d.payload);
  } catch {
    payload = null;
  }
  const [kind, id] = d.key.split(":") as ["hook" | "app", string];
  return {
    ...simpleView(d),
    url: d.url,
    request: { headers: { ...d.headers }, payload },
    response: { headers: { ...d.outcome.response.headers }, payload: d.outcome.response.payload },
    hook_id: kind === "hook" ? Number(id) : null,
    app_id: kind === "app" ? Number(id) : null,
  };
}

/** A delivery as GitHub lists it (`simple-webhook-delivery`: no URL, request or response). */
function simpleView(d: StoredDelivery) {
  return {
    id: d.id,
    guid: d.guid,
    delivered_at: iso(d.deliveredAt),
    redelivery: d.redelivery,
    duration: d.outcome.duration,
    status: d.outcome.status,
    status_code: d.outcome.status_code,
    event: d.event,
    action: d.action,
    installation_id: d.installation_id,
    repository_id: d.repository_id,
    throttled_at: null,
  };
}

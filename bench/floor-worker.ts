import { verify } from "@octokit/webhooks-methods";

/**
 * Floors: the least a Worker on D1 can do and still do the job, run in the same kind of workerd
 * as the coordinator, so its figures can be read against the floor's.
 *
 *  - `npm run bench:webhooks` (any path but `/floor/lifecycle/…`): a webhook receiver — verify
 *    the HMAC and insert one D1 row.
 *  - `npm run bench:floor` (`/floor/lifecycle/…`, bench/lifecycle-floor.mjs): a runner's whole
 *    life as the coordinator serves it, each request doing the least its job needs: the three
 *    workflow_job deliveries (HMAC, one D1 write; `queued` also writes the instance and asks the
 *    shim for a machine, `completed` asks the shim to delete it and writes the instance), and
 *    the machine's bootstrap requests (its bearer token checked by HMAC, one D1 read or write).
 *    No object, no reconcile, no logging, no GitHub call: what is left is what wrangler dev's
 *    workerd spends per request and per D1 query.
 */
interface FloorEnv {
  DB: D1Database;
  WEBHOOK_SECRET: string;
  /** Where the lifecycle's machines are created and deleted (bench/lifecycle-floor.mjs serves it). */
  SHIM_URL?: string;
}

const json = (body: unknown, status = 200) => Response.json(body, { status });

// The instances table of the floor's own (the coordinator's has columns and keys the floor does
// not need), made by the bench's first request: `/floor/lifecycle/setup`.
const setup = async (db: D1Database) => {
  await db
    .prepare(
      "CREATE TABLE IF NOT EXISTS floor_instances (name TEXT PRIMARY KEY, status TEXT NOT NULL, report TEXT, updated_at INTEGER NOT NULL)",
    )
    .run();
  return json({ ok: true });
};

// The machine's token is `name.hex(HMAC-SHA256(secret, name))`; the key is imported once per isolate.
let tokenKey: Promise<CryptoKey> | null = null;
const keyFor = (secret: string) =>
  (tokenKey ??= crypto.subtle.importKey("raw", new TextEncoder().encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["verify"]));

async function machineName(req: Request, env: FloorEnv): Promise<string | null> {
  const token = (req.headers.get("authorization") ?? "").replace(/^Bearer /, "");
  const dot = token.lastIndexOf(".");
  if (dot < 1) return null;
  const name = token.slice(0, dot);
  const hex = token.slice(dot + 1);
  if (!/^[0-9a-f]{64}$/.test(hex)) return null;
  const mac = new Uint8Array(hex.match(/../g)!.map((b) => Number.parseInt(b, 16)));
  const ok = await crypto.subtle.verify("HMAC", await keyFor(env.WEBHOOK_SECRET), mac, new TextEncoder().encode(name));
  return ok ? name : null;
}

async function webhook(req: Request, env: FloorEnv): Promise<Response> {
  const body = await req.text();
  const signature = req.headers.get("x-hub-signature-256") ?? "";
  const valid = await verify(env.WEBHOOK_SECRET, body, signature).catch(() => false);
  if (!valid) return json({ error: "unauthorized" }, 401);
  await env.DB.prepare(
    "INSERT INTO webhook_deliveries (delivery_id, event, action, received_at, outcome, job_id) VALUES (?, ?, NULL, ?, 'floor', NULL)",
  )
    .bind(req.headers.get("x-github-delivery"), req.headers.get("x-github-event"), Date.now())
    .run();
  return json({ ok: true });
}

/** A delivery of the lifecycle: its runner's name rides in `?runner=` (the floor does no matching). */
async function lifecycleWebhook(req: Request, env: FloorEnv, runner: string): Promise<Response> {
  const body = await req.text();
  const valid = await verify(env.WEBHOOK_SECRET, body, req.headers.get("x-hub-signature-256") ?? "").catch(() => false);
  if (!valid) return json({ error: "unauthorized" }, 401);
  const action = (JSON.parse(body) as { action?: string }).action;
  const now = Date.now();
  const delivery = env.DB.prepare(
    "INSERT INTO webhook_deliveries (delivery_id, event, action, received_at, outcome, job_id) VALUES (?, ?, ?, ?, 'floor', NULL)",
  ).bind(req.headers.get("x-github-delivery"), req.headers.get("x-github-event"), action ?? null, now);
  if (action === "queued") {
    await env.DB.batch([
      delivery,
      env.DB.prepare("INSERT INTO floor_instances (name, status, updated_at) VALUES (?, 'creating', ?)").bind(runner, now),
    ]);
    const created = await fetch(`${env.SHIM_URL}/instances`, { method: "POST", body: JSON.stringify({ name: runner }) });
    await created.arrayBuffer();
  } else if (action === "completed") {
    await delivery.run();
    const deleted = await fetch(`${env.SHIM_URL}/instances/${runner}`, { method: "DELETE" });
    await deleted.arrayBuffer();
    await env.DB.prepare("UPDATE floor_instances SET status = 'deleted', updated_at = ? WHERE name = ?").bind(Date.now(), runner).run();
  } else {
    await delivery.run();
  }
  return json({ ok: true });
}

async function machine(req: Request, env: FloorEnv): Promise<Response> {
  const name = await machineName(req, env);
  if (!name) return json({ error: "unauthorized" }, 401);
  if (req.method === "GET" && new URL(req.url).searchParams.has("mint")) {
    // The first credentials file: the JIT config minted at GitHub and kept.
    const minted = await fetch(`${env.SHIM_URL}/jit`, { method: "POST", body: JSON.stringify({ name }) });
    const config = await minted.text();
    await env.DB.prepare("UPDATE floor_instances SET report = ?, updated_at = ? WHERE name = ?").bind(config, Date.now(), name).run();
    return new Response(config);
  }
  if (req.method === "GET") {
    const row = await env.DB.prepare("SELECT name, status FROM floor_instances WHERE name = ?").bind(name).first();
    return row ? json(row) : json({ error: "not found" }, 404);
  }
  const report = await req.text();
  await env.DB.prepare("UPDATE floor_instances SET report = ?, updated_at = ? WHERE name = ?").bind(report, Date.now(), name).run();
  return json({ ok: true });
}

export default {
  async fetch(req: Request, env: FloorEnv): Promise<Response> {
    const url = new URL(req.url);
    if (!url.pathname.startsWith("/floor/lifecycle/")) return webhook(req, env);
    if (url.pathname === "/floor/lifecycle/setup") return setup(env.DB);
    if (url.pathname === "/floor/lifecycle/webhook") return lifecycleWebhook(req, env, url.searchParams.get("runner") ?? "");
    if (url.pathname === "/floor/lifecycle/machine") return machine(req, env);
    return json({ error: "not found" }, 404);
  },
} satisfies ExportedHandler<FloorEnv>;

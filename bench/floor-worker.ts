import { verify } from "@octokit/webhooks-methods";

/**
 * The floor for `npm run bench:webhooks`: the least a webhook receiver can do and still be
 * one — verify the HMAC and insert one D1 row. Runs in the same workerd as the coordinator.
 */
interface FloorEnv {
  DB: D1Database;
  WEBHOOK_SECRET: string;
}

export default {
  async fetch(req: Request, env: FloorEnv): Promise<Response> {
    const body = await req.text();
    const signature = req.headers.get("x-hub-signature-256") ?? "";
    const valid = await verify(env.WEBHOOK_SECRET, body, signature).catch(() => false);
    if (!valid) return Response.json({ error: "unauthorized" }, { status: 401 });
    await env.DB.prepare(
      "INSERT INTO webhook_deliveries (delivery_id, event, action, received_at, outcome, job_id) VALUES (?, ?, NULL, ?, 'floor', NULL)",
    )
      .bind(req.headers.get("x-github-delivery"), req.headers.get("x-github-event"), Date.now())
      .run();
    return Response.json({ ok: true });
  },
} satisfies ExportedHandler<FloorEnv>;

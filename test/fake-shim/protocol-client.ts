import { createHmac } from "node:crypto";
import { garmBootstrap } from "../fixtures/bootstrap-instance.ts";

/**
 * Protocol requests to a fake shim (or simulator) tenant as the coordinator signs them, for the
 * tests of the fake itself: signed with node:crypto, independently of src/providers/shim-signing.ts.
 */

export interface Reply {
  status: number;
  body: any;
}

export function protocolClient(tenantUrl: string, secret: string, pool = "pool-1") {
  const send = async (method: string, route: string, body?: unknown, opts: { unsigned?: boolean } = {}): Promise<Reply> => {
    const url = tenantUrl + route;
    const raw = body === undefined ? "" : JSON.stringify(body);
    const ts = String(Math.floor(Date.now() / 1000));
    const sig = createHmac("sha256", secret)
      .update(`${ts}\n${method}\n${new URL(url).pathname}\n${raw}`)
      .digest("hex");
    const res = await fetch(url, {
      method,
      headers: {
        ...(opts.unsigned ? {} : { "x-edgerunner-timestamp": ts, "x-edgerunner-signature": `sha256=${sig}` }),
        "x-edgerunner-controller-id": "ctrl",
        "x-edgerunner-pool-id": pool,
        "x-edgerunner-pool-extra-specs": Buffer.from("{}").toString("base64"),
        ...(raw ? { "content-type": "application/json" } : {}),
      },
      ...(raw ? { body: raw } : {}),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null };
  };
  /** A BootstrapInstance of `name` for the client's pool: GARM's example with `over` replacing fields. */
  const bootstrap = (name: string, over: Record<string, unknown> = {}) => ({ ...garmBootstrap, name, pool_id: pool, ...over });
  return {
    send,
    bootstrap,
    create: (name: string, over: Record<string, unknown> = {}) => send("POST", "/v1/instances", bootstrap(name, over)),
  };
}

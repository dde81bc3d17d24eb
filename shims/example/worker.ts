import { BootstrapInstance, SHIM_INTERFACE_VERSION, ShimHeaders, type ValidProviderInstance } from "../../src/providers/shim-protocol.ts";
import { matchShimRoute } from "../../src/providers/shim-routes.ts";
import { requestTarget, verifySignature } from "../../src/providers/shim-signing.ts";

/**
 * A complete provider shim in one Worker, as a template for another cloud
 * (docs/writing-a-shim.md). Everything cloud-specific is behind `Cloud`; `MemoryCloud` keeps
 * machines in the isolate's memory so the template runs and passes the conformance kit as is.
 */

export interface Pool {
  controllerId: string;
  poolId: string;
}

export interface Machine extends Pool {
  id: string;
  name: string;
  running: boolean;
  address?: string;
}

/** The five things a shim asks of a cloud. Tag machines with the pool, the controller and the name. */
export interface Cloud {
  /** Idempotent on the name (a client token, a unique name): a second launch returns the first machine. */
  launch(pool: Pool, b: BootstrapInstance): Promise<Machine>;
  /** By cloud id or name; `pool` null: in any pool. */
  find(pool: Pool | null, idOrName: string): Promise<Machine | null>;
  list(pool: Pool): Promise<Machine[]>;
  destroy(m: Machine): Promise<void>;
  power(m: Machine, on: boolean): Promise<void>;
}

export class MemoryCloud implements Cloud {
  private machines = new Map<string, Machine>();
  async launch(pool: Pool, b: BootstrapInstance) {
    const same = await this.find(pool, b.name);
    if (same) return same;
    const m: Machine = {
      ...pool,
      id: `vm-${crypto.randomUUID()}`,
      name: b.name,
      running: true,
      address: `10.0.0.${this.machines.size + 2}`,
    };
    this.machines.set(m.id, m);
    return m;
  }
  async find(pool: Pool | null, idOrName: string) {
    const ours = (m: Machine) => !pool || (m.poolId === pool.poolId && m.controllerId === pool.controllerId);
    return [...this.machines.values()].find((m) => ours(m) && (m.id === idOrName || m.name === idOrName)) ?? null;
  }
  async list(pool: Pool) {
    return [...this.machines.values()].filter((m) => m.poolId === pool.poolId && m.controllerId === pool.controllerId);
  }
  async destroy(m: Machine) {
    this.machines.delete(m.id);
  }
  async power(m: Machine, on: boolean) {
    m.running = on;
  }
}

const reply = (status: number, body?: unknown) => (body === undefined ? new Response(null, { status }) : Response.json(body, { status }));

/** GARM's ProviderInstance for a machine. */
const instance = (m: Machine): ValidProviderInstance => ({
  provider_id: m.id,
  name: m.name,
  status: m.running ? "running" : "stopped",
  addresses: m.address ? [{ address: m.address, type: "private" }] : [],
});

function extraSpecsOk(header: string | null): boolean {
  try {
    return header !== null && /^[A-Za-z0-9+/]*={0,2}$/.test(header) && JSON.parse(atob(header)) !== undefined;
  } catch {
    return false;
  }
}

export function createShim(cloud: Cloud, secret: string) {
  return async (request: Request): Promise<Response> => {
    const url = new URL(request.url);
    const body = await request.text();
    const received = { timestamp: request.headers.get(ShimHeaders.timestamp), signature: request.headers.get(ShimHeaders.signature) };
    const check = await verifySignature(secret, { method: request.method, pathWithQuery: requestTarget(url), body }, received);
    if (!check.ok) return reply(401, { error: "unauthorized", details: { reason: check.reason } });
    const route = matchShimRoute(request.method, url.pathname);
    if (route === null || route === "bad_id") return reply(404, { error: "no such route" });
    if (route === "method_not_allowed") return reply(405, { error: "method not allowed" });
    if (route.op === "capabilities") return reply(200, { interface_version: SHIM_INTERFACE_VERSION, async: false });
    // A v1 shim: no batch create in its capabilities, so the coordinator never sends one.
    if (route.op === "create_batch") return reply(404, { error: "no such route" });
    // Nor a flavor catalogue (v1.2): its scale sets cannot be shaped.
    if (route.op === "flavors") return reply(404, { error: "no such route" });

    const pool = {
      controllerId: request.headers.get(ShimHeaders.controllerId) ?? "",
      poolId: request.headers.get(ShimHeaders.poolId) ?? "",
    };
    if (!pool.controllerId || !pool.poolId || !extraSpecsOk(request.headers.get(ShimHeaders.poolExtraSpecs)))
      return reply(400, { error: "missing or malformed pool headers" });
    switch (route.op) {
      case "create": {
        let b;
        try {
          b = BootstrapInstance.safeParse(JSON.parse(body));
        } catch {
          return reply(400, { error: "body is not JSON" });
        }
        if (!b.success) return reply(400, { error: "body is not a BootstrapInstance" });
        if (b.data.pool_id !== pool.poolId) return reply(400, { error: "pool_id differs from X-Edgerunner-Pool-Id" });
        const existing = await cloud.find(null, b.data.name);
        if (existing && existing.poolId !== pool.poolId) return reply(409, { error: `${b.data.name} belongs to another pool` });
        if (existing) return reply(200, instance(existing));
        return reply(201, instance(await cloud.launch(pool, b.data)));
      }
      case "list":
        return reply(200, (await cloud.list(pool)).map(instance));
      case "remove_all":
        for (const m of await cloud.list(pool)) await cloud.destroy(m);
        return reply(204);
      case "get":
      case "delete":
      case "start":
      case "stop": {
        const m = await cloud.find(pool, route.id);
        if (!m) return reply(404, { error: `no instance ${route.id}` });
        if (route.op === "get") return reply(200, instance(m));
        if (route.op === "delete") await cloud.destroy(m);
        else await cloud.power(m, route.op === "start");
        return reply(204);
      }
    }
  };
}

const memory = new MemoryCloud();
export default {
  fetch: (request: Request, env: { SHIM_SECRET: string }) => createShim(memory, env.SHIM_SECRET)(request),
};

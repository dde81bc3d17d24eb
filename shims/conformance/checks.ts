import { OperationAccepted, ShimCapabilities, ShimHeaders } from "../../src/providers/shim-protocol.ts";
import { batchChecks } from "./batch-checks.ts";
import type { Answer } from "./client.ts";
import { type Context, fail, skip } from "./context.ts";
import { flavorChecks } from "./flavor-checks.ts";

/**
 * The checks, in the order they run: each drives the shim through one promise of provider shim
 * protocol v1, v1.1 and v1.2 (docs/provider-shim-protocol.md; batch create: batch-checks.ts;
 * the flavor catalogue: flavor-checks.ts) and passes (returning what it saw), fails or is
 * skipped. Later checks use the machines earlier ones made; the last ones clean up.
 */

export interface Check {
  name: string;
  // biome-ignore lint/suspicious/noConfusingVoidType: a check returns a note, or nothing at all
  run(ctx: Context): Promise<string | void>;
}

const expectStatus = (a: Answer, wanted: number[], what: string) => {
  if (!wanted.includes(a.status))
    fail(`${what}: got ${a.status}${a.text ? ` ${a.text.slice(0, 200)}` : ""}, wanted ${wanted.join(" or ")}`);
};

/** A 4xx that says "your request is wrong": not 401 (signature), 404 (route) or 409 (duplicate). */
const expectBadRequest = (a: Answer, what: string) => {
  if (a.status < 400 || a.status > 499 || [401, 404, 409].includes(a.status))
    fail(`${what}: got ${a.status} ${a.text.slice(0, 200)}, wanted a 4xx such as 400`);
  return `${a.status}`;
};

const names = (list: { name: string }[]) => list.map((m) => m.name);

const signatureRefusal = (name: string, send: (ctx: Context) => Promise<Answer>): Check => ({
  name: `signature: ${name} → 401`,
  async run(ctx) {
    expectStatus(await send(ctx), [401], name);
  },
});

export const checks: Check[] = [
  {
    name: "capabilities: interface v1, v1.1 with batch_create, or v1.2 with flavors (and batch_create or not)",
    async run(ctx) {
      const a = await ctx.send("GET", "/v1/capabilities");
      expectStatus(a, [200], "GET /v1/capabilities");
      const c = ShimCapabilities.safeParse(a.json);
      if (!c.success) return fail(`not {interface_version, async, batch_create?: {max ≥ 1}, flavors?: boolean}: ${a.text.slice(0, 200)}`);
      const { interface_version: version, batch_create: batch, flavors } = c.data;
      if (version !== "v1" && version !== "v1.1" && version !== "v1.2") return fail(`interface_version is ${version}`);
      // v1.2 is the version of the flavor catalogue; batch create, from v1.1, stays optional beside it.
      if ((version === "v1.2") !== (flavors === true)) return fail(`interface_version ${version} with flavors ${JSON.stringify(flavors)}`);
      if (version !== "v1.2" && (version === "v1.1") !== (batch !== undefined))
        return fail(`interface_version ${version} with batch_create ${JSON.stringify(batch)}`);
      ctx.capabilities = c.data;
      return `async: ${c.data.async}${batch ? `, batch create up to ${batch.max}` : ""}${flavors ? ", flavor catalogue" : ""}`;
    },
  },
  signatureRefusal("no signature headers", (ctx) =>
    ctx.send("GET", "/v1/instances", { omit: [ShimHeaders.signature, ShimHeaders.timestamp] }),
  ),
  signatureRefusal("a malformed signature", (ctx) => ctx.send("GET", "/v1/instances", { signature: "sha256=not-hex" })),
  signatureRefusal("another secret", (ctx) => ctx.send("GET", "/v1/instances", { secret: `${ctx.o.target.secret}-but-not-quite` })),
  signatureRefusal("a timestamp 10 minutes old", (ctx) => ctx.send("GET", "/v1/instances", { at: Date.now() - 600_000 })),
  signatureRefusal("a timestamp 10 minutes ahead", (ctx) => ctx.send("GET", "/v1/instances", { at: Date.now() + 600_000 })),
  signatureRefusal("a signature made for another path", (ctx) =>
    ctx.send("GET", "/v1/instances", { signPath: new URL(ctx.o.target.url.replace(/\/+$/, "") + "/v1/capabilities").pathname }),
  ),
  {
    name: "signature: a create whose body is not the one signed → 401, nothing made",
    async run(ctx) {
      const name = ctx.nextName();
      const signed = JSON.stringify(ctx.bootstrap(`${name}-signed`));
      expectStatus(await ctx.send("POST", "/v1/instances", { body: ctx.bootstrap(name), signBody: signed }), [401], "tampered body");
      const list = await ctx.list();
      if (list.some((m) => m.name.startsWith(name))) fail("the refused create made a machine");
    },
  },
  {
    name: "bad request: a body that is not JSON → 4xx",
    run: async (ctx) => expectBadRequest(await ctx.send("POST", "/v1/instances", { raw: "{not json" }), "not JSON"),
  },
  {
    name: "bad request: JSON that is not a BootstrapInstance → 4xx",
    run: async (ctx) =>
      expectBadRequest(await ctx.send("POST", "/v1/instances", { body: { name: ctx.nextName(), image: 42 } }), "not a BootstrapInstance"),
  },
  {
    name: "bad request: no X-Edgerunner-Pool-Id → 4xx",
    run: async (ctx) =>
      expectBadRequest(
        await ctx.send("POST", "/v1/instances", { body: ctx.bootstrap(ctx.nextName()), omit: [ShimHeaders.poolId] }),
        "no pool header",
      ),
  },
  {
    name: "bad request: pool_id in the body differs from the header → 4xx",
    run: async (ctx) =>
      expectBadRequest(await ctx.send("POST", "/v1/instances", { body: ctx.bootstrap(ctx.nextName(), ctx.poolB) }), "pool mismatch"),
  },
  {
    name: "bad request: X-Edgerunner-Pool-Extra-Specs not base64 of JSON → 4xx",
    run: async (ctx) =>
      expectBadRequest(
        await ctx.send("POST", "/v1/instances", {
          body: ctx.bootstrap(ctx.nextName()),
          headers: { [ShimHeaders.poolExtraSpecs]: "not base64 %%" },
        }),
        "bad extra specs header",
      ),
  },
  {
    name: "bad requests made nothing",
    async run(ctx) {
      const list = await ctx.list();
      if (list.length) fail(`pool has ${list.length} machine(s) after refused requests: ${names(list).join(", ")}`);
    },
  },
  {
    name: "create: a valid machine with the name asked for",
    async run(ctx) {
      const m = await ctx.create(ctx.nextName());
      return `${m.provider_id} ${m.status}`;
    },
  },
  {
    name: "get: by provider id and by name",
    async run(ctx) {
      const m = ctx.firstMachine();
      for (const id of [m.provider_id, m.name]) {
        const a = await ctx.send("GET", `/v1/instances/${encodeURIComponent(id)}`);
        expectStatus(a, [200], `GET ${id}`);
        const got = a.json as { provider_id?: string; name?: string };
        if (got.provider_id !== m.provider_id || got.name !== m.name) fail(`GET ${id} answered ${a.text.slice(0, 200)}`);
      }
    },
  },
  {
    name: "idempotent create: the same name again answers the same machine",
    async run(ctx) {
      const m = ctx.firstMachine();
      const again = await ctx.createdMachine(m.name, await ctx.send("POST", "/v1/instances", { body: ctx.bootstrap(m.name) }));
      if (again.provider_id !== m.provider_id) fail(`got ${again.provider_id}, first create made ${m.provider_id}`);
      const same = (await ctx.list()).filter((x) => x.name === m.name);
      if (same.length !== 1) fail(`${same.length} machines named ${m.name}`);
    },
  },
  {
    name: "idempotent create: two creates of one name at once make one machine",
    async run(ctx) {
      const name = ctx.nextName();
      const body = ctx.bootstrap(name);
      const [a, b] = await Promise.all([ctx.send("POST", "/v1/instances", { body }), ctx.send("POST", "/v1/instances", { body })]);
      const [x, y] = await Promise.all([ctx.createdMachine(name, a), ctx.createdMachine(name, b)]);
      ctx.machines.set(name, x);
      if (x.provider_id !== y.provider_id) fail(`two machines: ${x.provider_id} and ${y.provider_id}`);
      const same = (await ctx.list()).filter((m) => m.name === name);
      if (same.length !== 1) fail(`${same.length} machines named ${name}`);
    },
  },
  {
    name: "list: every machine of the pool, across the cloud's pages",
    async run(ctx) {
      ctx.firstMachine();
      while (ctx.machines.size < ctx.o.machines) await ctx.create(ctx.nextName());
      const listed = await ctx.eventually("every machine in the list", async () => {
        const l = await ctx.list();
        return [...ctx.machines.keys()].every((n) => l.some((m) => m.name === n)) ? l : null;
      });
      const extra = listed.filter((m) => !ctx.machines.has(m.name));
      if (extra.length) fail(`the list has machines the checks did not make: ${names(extra).join(", ")}`);
      return `${listed.length} machines`;
    },
  },
  {
    name: "pool isolation: another pool cannot see, stop or delete them",
    async run(ctx) {
      const m = ctx.firstMachine();
      const other = { pool: ctx.poolB };
      const b = await ctx.list(ctx.poolB);
      if (b.length) fail(`pool B lists ${names(b).join(", ")}`);
      expectStatus(await ctx.send("GET", `/v1/instances/${encodeURIComponent(m.provider_id)}`, other), [404], "GET from pool B");
      expectStatus(await ctx.send("POST", `/v1/instances/${encodeURIComponent(m.provider_id)}/stop`, other), [404], "stop from pool B");
      expectStatus(await ctx.send("DELETE", `/v1/instances/${encodeURIComponent(m.provider_id)}`, other), [404], "DELETE from pool B");
      expectStatus(await ctx.send("DELETE", `/v1/instances/${encodeURIComponent(m.name)}`, other), [404], "DELETE by name from pool B");
      const still = (await ctx.list()).find((x) => x.provider_id === m.provider_id);
      if (still?.status !== "running") fail(`pool A's machine is ${still ? still.status : "gone"} after pool B's calls`);
    },
  },
  {
    name: "pool isolation: a name taken in another pool → 409 (or, async, a failure callback)",
    async run(ctx) {
      const m = ctx.firstMachine();
      const a = await ctx.send("POST", "/v1/instances", { body: ctx.bootstrap(m.name, ctx.poolB), pool: ctx.poolB });
      // An asynchronous shim may only find out later: then the create's callback reports the failure.
      const later = a.status === 202 && ctx.async ? OperationAccepted.safeParse(a.json) : null;
      if (later?.success && ctx.o.inbox?.fixedPort) {
        const cb = await ctx.eventually("the callback of the refused create", async () => ctx.o.inbox!.find(later.data.operation_id));
        if (!cb.error || cb.result) fail(`202, then a callback that does not report the conflict: ${JSON.stringify(cb)}`);
      } else if (!later?.success) expectStatus(a, [409], "create in pool B of pool A's name");
      const b = await ctx.list(ctx.poolB);
      if (b.length) fail(`pool B now has ${names(b).join(", ")}`);
      const still = (await ctx.list()).find((x) => x.provider_id === m.provider_id);
      if (!still) fail("pool A's machine is gone");
      return later?.success ? "202, then a failure callback" : "409";
    },
  },
  {
    name: "stop and start",
    async run(ctx) {
      const m = ctx.firstMachine();
      const status = async () => (await ctx.send("GET", `/v1/instances/${encodeURIComponent(m.provider_id)}`)).json as { status?: string };
      expectStatus(await ctx.send("POST", `/v1/instances/${encodeURIComponent(m.provider_id)}/stop`), [200, 204], "stop");
      await ctx.eventually("status stopped", async () => (await status()).status === "stopped");
      // A cloud may refuse to start what is still stopping: retried like the coordinator would.
      await ctx.eventually("start accepted", async () => {
        const a = await ctx.send("POST", `/v1/instances/${encodeURIComponent(m.provider_id)}/start`);
        if (a.status >= 500 || a.status === 409) return false;
        expectStatus(a, [200, 204], "start");
        return true;
      });
      await ctx.eventually("status running", async () => (await status()).status === "running");
    },
  },
  {
    name: "404 for machines that do not exist (get, delete, start, stop)",
    async run(ctx) {
      const missing = [`${ctx.nextName()}-missing`, `missing/${ctx.run}`, "i-0123456789abcdef0"];
      for (const id of missing) {
        const path = `/v1/instances/${encodeURIComponent(id)}`;
        expectStatus(await ctx.send("GET", path), [404], `GET ${id}`);
        expectStatus(await ctx.send("DELETE", path), [404], `DELETE ${id}`);
        expectStatus(await ctx.send("POST", `${path}/start`), [404], `start ${id}`);
        expectStatus(await ctx.send("POST", `${path}/stop`), [404], `stop ${id}`);
      }
    },
  },
  {
    name: "delete: by provider id, then 404 for it",
    async run(ctx) {
      const m = ctx.firstMachine();
      const status = await ctx.deleted(m.provider_id);
      ctx.machines.delete(m.name);
      // An async shim may still be finishing the first delete after GET already says 404: until
      // then a repeat answers 202 with the first delete's operation id (the same delete, joined).
      // Anything else, or a 202 for a new operation, fails at once.
      const first = ctx.accepted.find((op) => op.kind === "delete" && op.name === m.provider_id)?.operation_id;
      await ctx.eventually("second DELETE answering 404", async () => {
        const again = await ctx.send("DELETE", `/v1/instances/${encodeURIComponent(m.provider_id)}`);
        const joined =
          again.status === 202 && first !== undefined && (again.json as { operation_id?: string } | null)?.operation_id === first;
        if (joined) return false;
        expectStatus(again, [404], "second DELETE");
        return true;
      });
      return `${status}`;
    },
  },
  {
    name: "delete: by name",
    async run(ctx) {
      const m = ctx.firstMachine();
      await ctx.deleted(m.name);
      ctx.machines.delete(m.name);
    },
  },
  ...batchChecks,
  ...flavorChecks,
  {
    name: "remove all: the pool's machines go, another pool's stay",
    async run(ctx) {
      const keep = await ctx.create(ctx.nextName(), ctx.poolB);
      const a = await ctx.send("DELETE", "/v1/instances");
      expectStatus(a, [200, 202, 204], "DELETE /v1/instances");
      await ctx.eventually("pool A empty", async () => (await ctx.list()).length === 0);
      ctx.machines.clear();
      if (!(await ctx.list(ctx.poolB)).some((m) => m.provider_id === keep.provider_id)) fail("pool B's machine went too");
      expectStatus(await ctx.send("DELETE", "/v1/instances", { pool: ctx.poolB }), [200, 202, 204], "DELETE /v1/instances of pool B");
      await ctx.eventually("pool B empty", async () => (await ctx.list(ctx.poolB)).length === 0);
    },
  },
  {
    name: "async: every 202 is followed by a signed, valid callback",
    async run(ctx) {
      if (!ctx.async) return skip("the shim is synchronous (capabilities: async false)");
      if (!ctx.accepted.length) return skip("the shim answered no 202");
      const inbox = ctx.o.inbox;
      if (!inbox?.fixedPort)
        return skip(`answered ${ctx.accepted.length} 202s; give --callback-port (and point the shim's callbacks there) to check them`);
      for (const op of ctx.accepted) {
        const cb = await ctx.eventually(`the callback for ${op.kind} ${op.name}`, async () => inbox.find(op.operation_id));
        if (cb.error) fail(`${op.kind} ${op.name} reported failure: ${cb.error.message}`);
        if (op.kind === "create" && (cb.instance_name !== op.name || cb.result?.name !== op.name))
          fail(`the create callback for ${op.name} names ${cb.instance_name}/${cb.result?.name}`);
        if (op.kind === "delete" && cb.result !== null) fail(`the delete callback for ${op.name} carries a result`);
      }
      const bad = inbox.received.filter((r) => !r.signature_ok || r.problem);
      if (bad.length)
        fail(`${bad.length} callback(s) refused: ${bad.map((r) => (r.signature_ok ? r.problem : "bad signature")).join("; ")}`);
      return `${ctx.accepted.length} callbacks`;
    },
  },
];

import {
  BatchCreateResponse,
  type BootstrapInstance,
  OperationAccepted,
  type ValidProviderInstance,
} from "../../src/providers/shim-protocol.ts";
import type { Answer } from "./client.ts";
import { type Context, fail, skip } from "./context.ts";

/**
 * The checks of protocol v1.1's batch create (`POST /v1/instances:batch`), run when the shim's
 * capabilities offer it (`batch_create: {max}`) and skipped when not. Each instance of a batch
 * must be answered exactly as its single create would be.
 */

const BATCH = "/v1/instances:batch";

/** The batch's largest size, or a skip for a shim without batch create. */
const offered = (ctx: Context): number =>
  ctx.capabilities?.batch_create?.max ?? skip("the shim offers no batch create (no batch_create in its capabilities)");

/** One answer per instance, by name, each as an Answer a single create could have given. */
function itemAnswers(a: Answer, names: string[]): Map<string, Answer> {
  if (a.status !== 200) return fail(`batch answered ${a.status}: ${a.text.slice(0, 300)}`);
  const r = BatchCreateResponse.safeParse(a.json);
  if (!r.success) return fail(`batch answered 200 without {results: [{name, status, body}]}: ${a.text.slice(0, 200)}`);
  const out = new Map<string, Answer>();
  for (const item of r.data.results) {
    if (out.has(item.name)) fail(`two results for ${item.name}`);
    out.set(item.name, { status: item.status, text: JSON.stringify(item.body ?? null), json: item.body });
  }
  const missing = names.filter((n) => !out.has(n));
  if (missing.length || out.size !== names.length) fail(`results for ${[...out.keys()].join(", ")}; asked for ${names.join(", ")}`);
  return out;
}

/** Sends a batch and waits for each of its machines the way the coordinator would (202: callback or GET). */
async function batchCreate(ctx: Context, bodies: BootstrapInstance[], pool = ctx.poolA): Promise<ValidProviderInstance[]> {
  const names = bodies.map((b) => b.name);
  const answers = itemAnswers(await ctx.send("POST", BATCH, { body: { instances: bodies }, pool }), names);
  return Promise.all(names.map((n) => ctx.createdMachine(n, answers.get(n)!, pool)));
}

/** A pool's machines whose names start with `prefix` (what a refused batch must not have made). */
const madeWith = async (ctx: Context, prefix: string, pool = ctx.poolA) => (await ctx.list(pool)).filter((m) => m.name.startsWith(prefix));

/** The first batch's instances, per run (the later checks repeat them). */
const firstBatch = new WeakMap<Context, BootstrapInstance[]>();
const madeIn = (ctx: Context) => firstBatch.get(ctx) ?? skip("needs the machines of the first batch check, which failed");

export const batchChecks = [
  {
    name: "batch create: a valid batch makes every machine, each answered as its single create",
    async run(ctx: Context) {
      const size = Math.min(3, offered(ctx));
      const made = Array.from({ length: size }, () => ctx.bootstrap(ctx.nextName()));
      const machines = await batchCreate(ctx, made);
      const listed = await ctx.list();
      const absent = made.filter((b) => !listed.some((m) => m.name === b.name));
      if (absent.length) fail(`not listed after the batch: ${absent.map((b) => b.name).join(", ")}`);
      firstBatch.set(ctx, made);
      return `${machines.length} machines in one request (largest batch ${offered(ctx)})`;
    },
  },
  {
    name: "batch create: the same batch again answers the same machines (idempotent per name)",
    async run(ctx: Context) {
      offered(ctx);
      const made = madeIn(ctx);
      const first = new Map((await ctx.list()).map((m) => [m.name, m.provider_id]));
      const again = await batchCreate(ctx, made);
      for (const m of again) if (first.get(m.name) !== m.provider_id) fail(`${m.name}: now ${m.provider_id}, first ${first.get(m.name)}`);
      const listed = await ctx.list();
      for (const b of made) {
        const same = listed.filter((m) => m.name === b.name).length;
        if (same !== 1) fail(`${same} machines named ${b.name}`);
      }
    },
  },
  {
    name: "batch create: one invalid instance refuses the whole batch → 4xx, nothing made",
    async run(ctx: Context) {
      offered(ctx);
      const name = ctx.nextName();
      const bad = { ...ctx.bootstrap(`${name}-b`), image: 42 };
      const a = await ctx.send("POST", BATCH, { body: { instances: [ctx.bootstrap(`${name}-a`), bad] } });
      if (a.status < 400 || a.status > 499 || [401, 404, 409].includes(a.status))
        fail(`got ${a.status} ${a.text.slice(0, 200)}, wanted a 4xx`);
      const other = await ctx.send("POST", BATCH, {
        body: { instances: [ctx.bootstrap(`${name}-c`), ctx.bootstrap(`${name}-d`, ctx.poolB)] },
      });
      if (other.status < 400 || other.status > 499 || [401, 404, 409].includes(other.status))
        fail(`an instance of another pool: got ${other.status} ${other.text.slice(0, 200)}, wanted a 4xx`);
      const left = [...(await madeWith(ctx, name)), ...(await madeWith(ctx, name, ctx.poolB))];
      if (left.length) fail(`the refused batches made ${left.map((m) => m.name).join(", ")}`);
      return `${a.status}, ${other.status}`;
    },
  },
  {
    name: "batch create: more than the largest batch → 400 or 413, nothing made",
    async run(ctx: Context) {
      const max = offered(ctx);
      const name = ctx.nextName();
      const bodies = Array.from({ length: max + 1 }, (_, i) => ctx.bootstrap(`${name}-${i}`));
      const a = await ctx.send("POST", BATCH, { body: { instances: bodies } });
      if (a.status !== 400 && a.status !== 413) fail(`${max + 1} instances: got ${a.status} ${a.text.slice(0, 200)}, wanted 400 or 413`);
      const left = await madeWith(ctx, name);
      if (left.length) fail(`the refused batch made ${left.length} machine(s)`);
      return `${a.status}`;
    },
  },
  {
    name: "batch create: a name taken in another pool fails alone (409, or a failure callback); the rest is made",
    async run(ctx: Context) {
      offered(ctx);
      const taken = madeIn(ctx)[0]!;
      const fresh = ctx.bootstrap(ctx.nextName(), ctx.poolB);
      const answers = itemAnswers(
        await ctx.send("POST", BATCH, { body: { instances: [ctx.bootstrap(taken.name, ctx.poolB), fresh] }, pool: ctx.poolB }),
        [taken.name, fresh.name],
      );
      const refused = answers.get(taken.name)!;
      const later = refused.status === 202 && ctx.async ? OperationAccepted.safeParse(refused.json) : null;
      if (later?.success && ctx.o.inbox?.fixedPort) {
        const cb = await ctx.eventually("the callback of the refused item", async () => ctx.o.inbox!.find(later.data.operation_id));
        if (!cb.error || cb.result) fail(`202, then a callback that does not report the conflict: ${JSON.stringify(cb)}`);
      } else if (!later?.success && refused.status !== 409) fail(`the taken name answered ${refused.status}, wanted 409`);
      await ctx.createdMachine(fresh.name, answers.get(fresh.name)!, ctx.poolB);
      const b = await ctx.list(ctx.poolB);
      if (b.some((m) => m.name === taken.name)) fail("pool B now has pool A's name");
      if (!(await ctx.list()).some((m) => m.name === taken.name)) fail("pool A's machine is gone");
      return later?.success ? "202, then a failure callback" : "409";
    },
  },
];

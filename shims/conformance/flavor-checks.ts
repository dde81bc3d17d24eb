import { type FlavorCatalogue, ShimHeaders, validateFlavorCatalogue } from "../../src/providers/shim-protocol.ts";
import type { Answer } from "./client.ts";
import { type Context, fail, skip } from "./context.ts";

/**
 * The checks of protocol v1.2's flavor catalogue (`GET /v1/flavors`), run when the shim's
 * capabilities say `flavors: true`. Without it the coordinator never asks for a catalogue and
 * never sends a shaped create, so the route should be 404 as any unknown route; another answer
 * is only noted. The coordinator chooses each shaped machine's flavor from this list: a
 * catalogue it refuses (one bad flavor, a name twice) or an empty one leaves shaped scale sets
 * with nothing to run.
 */

const FLAVORS = "/v1/flavors";

const offered = (ctx: Context) => ctx.capabilities?.flavors === true;
const needsFlavors = (ctx: Context) => offered(ctx) || skip("the shim offers no flavor catalogue (before protocol v1.2)");

const expectStatus = (a: Answer, wanted: number, what: string) => {
  if (a.status !== wanted) fail(`${what}: got ${a.status}${a.text ? ` ${a.text.slice(0, 200)}` : ""}, wanted ${wanted}`);
};

/** The catalogue the first check read, per run (the shaped create takes a flavor from it). */
const read = new WeakMap<Context, FlavorCatalogue>();

export const flavorChecks = [
  {
    name: "flavors: GET /v1/flavors answers a valid, non-empty catalogue (404 when the capabilities offer none)",
    async run(ctx: Context) {
      const a = await ctx.send("GET", FLAVORS);
      if (!offered(ctx)) {
        if (a.status === 404) return "no flavor catalogue: 404";
        return skip(`the capabilities offer no flavors, and ${FLAVORS} answered ${a.status} (not 404); the coordinator never asks`);
      }
      expectStatus(a, 200, `GET ${FLAVORS}`);
      const v = validateFlavorCatalogue(a.json);
      if (!v.ok) return fail(`not a valid flavor catalogue (one bad flavor spoils it): ${v.problems.slice(0, 3).join("; ")}`);
      if (!v.value.flavors.length) return fail("the catalogue is empty: a shaped scale set could be given no flavor");
      read.set(ctx, v.value);
      const archs = [...new Set(v.value.flavors.map((f) => f.architecture))].join(", ");
      return `${v.value.flavors.length} flavors (${archs}), prices in ${v.value.currency}`;
    },
  },
  {
    name: "flavors: GET /v1/flavors without a signature → 401",
    async run(ctx: Context) {
      needsFlavors(ctx);
      expectStatus(await ctx.send("GET", FLAVORS, { omit: [ShimHeaders.signature, ShimHeaders.timestamp] }), 401, "unsigned");
    },
  },
  {
    name: "flavors: a shaped create (a catalogued flavor, spot false, disk_gb null) makes the machine",
    async run(ctx: Context) {
      needsFlavors(ctx);
      const catalogue = read.get(ctx) ?? skip("needs the catalogue from the first flavors check, which failed");
      // The flavor the kit was given when the shim lists it (chosen for its price on a real account), else the first.
      const flavor = catalogue.flavors.find((f) => f.name === ctx.o.provider.flavor) ?? catalogue.flavors[0]!;
      const name = ctx.nextName();
      const body = { ...ctx.bootstrap(name), flavor: flavor.name, arch: flavor.architecture, shape: { disk_gb: null, spot: false } };
      const m = await ctx.createdMachine(name, await ctx.send("POST", "/v1/instances", { body }));
      await ctx.deleted(m.provider_id);
      return `${flavor.name}: ${m.provider_id}`;
    },
  },
];

import type { Flavor, FlavorCatalogue } from "../providers/shim-protocol";
import type { ShapeBounds, ShapeRequest } from "./shape-bounds";

/**
 * Which of a provider's flavors a shaped job's machine gets: the cheapest that satisfies the
 * request where the catalogue has prices, else the smallest (fewest vCPUs, then least memory),
 * the job's family order breaking ties, then the name, so every pass picks the same one. Never
 * above the scale set's bounds: a family whose smallest size is larger than the admin allows is
 * no way around them. The choice says why, so the instance can show it.
 */

export type FlavorChoice = { ok: true; flavor: Flavor; why: string } | { ok: false; problem: string };

const gb = (mib: number) => `${Math.round((mib / 1024) * 10) / 10} GB`;
const price = (f: Flavor, currency: string) => `${f.price_per_hour!.toFixed(4)} ${currency}/h`;

/** A narrowing of the catalogue, with how the job is told of it. */
type Step = [string, (f: Flavor) => boolean];
const when = (applies: boolean, step: Step): Step[] => (applies ? [step] : []);

export function chooseFlavor(catalogue: FlavorCatalogue, request: ShapeRequest, bounds: ShapeBounds): FlavorChoice {
  const families = request.families.length ? request.families : bounds.families;
  // Each step narrows the list; the first that leaves nothing is what the job is told.
  const steps: Step[] = [
    [request.arch, (f) => f.architecture === request.arch],
    ...when(families.length > 0, [`of family ${families.join(" or ")}`, (f) => families.includes(f.family)]),
    [
      request.gpus ? `with ${request.gpus} GPU${request.gpus > 1 ? "s" : ""} or more` : "without a GPU",
      (f) => (request.gpus ? (f.gpu?.count ?? 0) >= request.gpus : !f.gpu),
    ],
    ...when(request.spot, ["offered as spot", (f) => f.spot]),
    [`with ${request.cpu} vCPUs or more`, (f) => f.vcpus >= request.cpu],
    [`with ${request.ramGb} GB or more`, (f) => f.memory_mib >= request.ramGb * 1024],
    ...when(request.diskGb !== null, [
      `with a disk of ${request.diskGb} GB or more`,
      (f) => f.disk_gb === null || f.disk_gb === undefined || f.disk_gb >= request.diskGb!,
    ]),
    [
      `within this scale set's ${bounds.cpu.max} vCPUs and ${bounds.ram_gb.max} GB`,
      (f) => f.vcpus <= bounds.cpu.max && f.memory_mib <= bounds.ram_gb.max * 1024,
    ],
  ];
  let left = catalogue.flavors;
  const said: string[] = [];
  for (const [what, keep] of steps) {
    const next = left.filter(keep);
    if (next.length === 0) {
      const of = said.length
        ? `${left.length} ${left.length === 1 ? "flavor is" : "flavors are"} ${said.join(", ")}; none of them is`
        : "no flavor is";
      return { ok: false, problem: `of the provider's ${catalogue.flavors.length} flavors, ${of} ${what}` };
    }
    said.push(what);
    left = next;
  }
  const famIndex = (f: Flavor) => (families.includes(f.family) ? families.indexOf(f.family) : families.length);
  const priced = (f: Flavor) => typeof f.price_per_hour === "number";
  const ranked = [...left].sort(
    (a, b) =>
      Number(priced(b)) - Number(priced(a)) ||
      (priced(a) && priced(b) ? a.price_per_hour! - b.price_per_hour! : 0) ||
      a.vcpus - b.vcpus ||
      a.memory_mib - b.memory_mib ||
      famIndex(a) - famIndex(b) ||
      (a.name < b.name ? -1 : a.name > b.name ? 1 : 0),
  );
  const flavor = ranked[0]!;
  const size = `${flavor.vcpus} vCPUs, ${gb(flavor.memory_mib)}`;
  const why = priced(flavor)
    ? `cheapest (${price(flavor, catalogue.currency)}, ${size}) of ${left.length} matching flavors`
    : `smallest (${size}) of ${left.length} matching flavors; the catalogue has no prices`;
  return { ok: true, flavor, why };
}

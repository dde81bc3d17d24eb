/**
 * `edgerunner scaleset …`: scale sets (GARM's pools). A scale set is named by id, or by name when
 * only one has it; pause and resume set `enabled`.
 */

import type { components } from "../api-types.ts";
import { unwrap } from "../client.ts";
import {
  bool,
  type Command,
  type Context,
  defined,
  deleted,
  int,
  jsonObject,
  list,
  missing,
  nonEmpty,
  type OptionSpec,
  requireStr,
  str,
  type Values,
} from "../command.ts";
import { parseDuration } from "../duration.ts";
import { UsageError } from "../errors.ts";
import { type EntityKind, entityId, scaleSetId } from "../resolve.ts";
import { parseScheduleOption, SCHEDULE_FORMAT, type ScheduleEntry, scheduleLine } from "../schedule-option.ts";
import { boundsLine, imagesLine, SHAPE_OPTIONS, shapeBounds } from "../shape-options.ts";
import { renderRecord, renderTable } from "../table.ts";

type ScaleSet = components["schemas"]["ScaleSet"];
type Create = components["schemas"]["CreateScaleSet"];
type Update = components["schemas"]["UpdateScaleSet"];
type Status = components["schemas"]["ScaleSetObjectStatus"];
type Detail = components["schemas"]["ScaleSetDetail"];

export const scaleSetTable = (rows: ScaleSet[]) =>
  renderTable<ScaleSet>(
    [
      { header: "ID", value: (s) => s.id },
      { header: "NAME", value: (s) => s.name },
      { header: "ENTITY", value: (s) => `${s.entity.kind}:${s.entity.name}` },
      { header: "PROVIDER", value: (s) => s.provider_name },
      { header: "LABELS", value: (s) => s.labels },
      { header: "MIN IDLE", value: (s) => s.min_idle_runners },
      { header: "MAX", value: (s) => s.max_runners },
      { header: "ENABLED", value: (s) => (s.enabled ? "yes" : "no") },
      { header: "IMAGE", value: (s) => s.image },
      { header: "FLAVOR", value: (s) => s.flavor },
    ],
    rows,
  );

const ENTITY_OPTS: Record<string, OptionSpec> = {
  repo: { type: "string", arg: "OWNER/NAME", description: "a repository (owner/name or id)" },
  org: { type: "string", arg: "NAME", description: "an organization (name or id)" },
  enterprise: { type: "string", arg: "SLUG", description: "an enterprise (slug or id)" },
};
const KIND_OF = { repo: "repository", org: "organization", enterprise: "enterprise" } as const;

/** The one entity --repo/--org/--enterprise names, if any. */
function entityFlag(values: Values): { kind: EntityKind; ref: string } | undefined {
  const given = (Object.keys(KIND_OF) as (keyof typeof KIND_OF)[]).filter((k) => str(values, k) !== undefined);
  if (given.length > 1) throw new UsageError(`give one of --repo, --org, --enterprise (not ${given.map((g) => `--${g}`).join(" and ")})`);
  const [flag] = given;
  return flag ? { kind: KIND_OF[flag], ref: str(values, flag)! } : undefined;
}

const FIELDS: Record<string, OptionSpec> = {
  provider: { type: "string", arg: "NAME", description: "the provider shim that makes its machines" },
  labels: { type: "string", arg: "A,B", multiple: true, description: "runner labels (comma-separated; repeatable)" },
  "min-idle-runners": { type: "string", arg: "N", description: "idle runners kept waiting" },
  "max-runners": { type: "string", arg: "N", description: "most runners at once" },
  image: { type: "string", arg: "IMAGE", description: "the provider's image" },
  flavor: { type: "string", arg: "FLAVOR", description: "the provider's machine size" },
  "os-type": { type: "string", arg: "linux|windows", description: "the runners' OS" },
  "os-arch": { type: "string", arg: "ARCH", description: "amd64, arm64, …" },
  "bootstrap-timeout": { type: "string", arg: "MINUTES", description: "how long a runner may take to come online" },
  "runner-prefix": { type: "string", arg: "PREFIX", description: "prefix of the runners' names" },
  "runner-group": { type: "string", arg: "GROUP", description: "the runner group (organizations and enterprises)" },
  "extra-specs": { type: "string", arg: "JSON", description: "provider-specific settings, a JSON object" },
  priority: { type: "string", arg: "N", description: "higher wins when several scale sets match a job" },
  "jit-config": { type: "boolean", description: "just-in-time runner configuration (--no-jit-config: registration tokens)" },
  intake: {
    type: "string",
    arg: "webhook|scaleset_api|poll",
    description:
      "how jobs reach it: webhooks, GitHub's runner scale set API (pull), or poll (Forgejo, its default there: Forgejo sends no job webhooks)",
  },
  "runner-download-url": {
    type: "string",
    arg: "URL|default",
    description: "where machines download act_runner / forgejo-runner (Gitea, Forgejo; default: the forge's documented release)",
  },
  "runner-download-sha256": {
    type: "string",
    arg: "HEX|none",
    description: "the runner download's SHA-256 (none: the checksum published beside the release)",
  },
  "jit-timing": {
    type: "string",
    arg: "on_boot|before_create",
    description: "who mints the JIT config: the machine when it first asks (default), or the scale set before the create",
  },
  "boot-time": {
    type: "string",
    arg: "SECONDS|auto",
    description: "create to the machine's first ask, which paces a burst's creates (auto: learned from its machines)",
  },
  "max-lifetime": {
    type: "string",
    arg: "DURATION|0",
    description: "machines older than this (24h, 90m, seconds) are deleted unless their runner is on a job (default 24h; 0: never)",
  },
  "hard-lifetime-cap": {
    type: "string",
    arg: "DURATION|none",
    description: "a lifetime that applies even to a runner on its job, at least --max-lifetime (none: no hard cap)",
  },
  "max-machine-hours": {
    type: "string",
    arg: "HOURS|none",
    description: "the spend guard: machine-hours a UTC day after which nothing more is created (none: no cap)",
  },
  schedule: {
    type: "string",
    arg: SCHEDULE_FORMAT,
    multiple: true,
    description: "min idle on a schedule, one entry each (repeatable; the entries given replace the whole schedule)",
  },
  "clear-schedules": { type: "boolean", description: "remove the schedule: min-idle-runners holds at all times" },
};

/** A duration option in whole seconds, `none` as null (where the API takes null), undefined when not given. */
function seconds(v: Values, name: string, none: boolean): number | null | undefined {
  const text = str(v, name);
  if (text === undefined) return undefined;
  if (none && text === "none") return null;
  return parseDuration(text, name);
}

/** Machine-hours (a decimal number), or `none`: null. */
function machineHours(v: Values): number | null | undefined {
  const text = str(v, "max-machine-hours");
  if (text === undefined) return undefined;
  if (text === "none") return null;
  if (!/^\d{1,6}(\.\d{1,4})?$/.test(text)) throw new UsageError(`--max-machine-hours: a number of hours (12, 7.5) or none, not "${text}"`);
  return Number(text);
}

/** A string option, `word` as null (the API's "back to the default"), undefined when not given. */
function orNull(v: Values, name: string, word: string): string | null | undefined {
  const text = str(v, name);
  return text === word ? null : text;
}

/** --schedule entries (the whole list) or --clear-schedules ([]); undefined when neither. */
function schedules(v: Values): ScheduleEntry[] | undefined {
  const given = v.schedule === undefined || typeof v.schedule === "boolean" ? [] : [v.schedule].flat();
  if (bool(v, "clear-schedules")) {
    if (given.length) throw new UsageError("give --schedule or --clear-schedules, not both");
    return [];
  }
  return given.length ? given.map(parseScheduleOption) : undefined;
}

/** The fields of a create or update, from the options (undefined where not given). */
function fields(v: Values) {
  return defined({
    name: str(v, "name"),
    provider_name: str(v, "provider"),
    labels: list(v, "labels"),
    min_idle_runners: int(v, "min-idle-runners"),
    max_runners: int(v, "max-runners"),
    image: str(v, "image"),
    flavor: str(v, "flavor"),
    os_type: str(v, "os-type") as Create["os_type"],
    os_arch: str(v, "os-arch") as Create["os_arch"],
    bootstrap_timeout: int(v, "bootstrap-timeout"),
    runner_prefix: str(v, "runner-prefix"),
    runner_group: str(v, "runner-group"),
    extra_specs: jsonObject(v, "extra-specs"),
    priority: int(v, "priority"),
    jit_config_enabled: bool(v, "jit-config"),
    intake: str(v, "intake") as Create["intake"],
    jit_config_timing: str(v, "jit-timing") as Create["jit_config_timing"],
    boot_time_seconds: str(v, "boot-time") === "auto" ? null : int(v, "boot-time"),
    max_runner_lifetime_seconds: seconds(v, "max-lifetime", false) ?? undefined,
    runner_lifetime_hard_cap_seconds: seconds(v, "hard-lifetime-cap", true),
    max_machine_hours_per_day: machineHours(v),
    schedules: schedules(v),
    runner_download_url: orNull(v, "runner-download-url", "default"),
    runner_download_sha256: orNull(v, "runner-download-sha256", "none"),
  });
}

const id = (ctx: Context) => scaleSetId(ctx.api(), ctx.positionals[0]!);

async function update(ctx: Context, body: Update) {
  const data = await unwrap(ctx.api().PUT("/api/v1/scalesets/{id}", { params: { path: { id: await id(ctx) } }, body }));
  return { data, text: scaleSetText(data) };
}

/** A scale set as created or updated: its schedule one entry after another, as `show` prints it. */
const scaleSetText = (d: ScaleSet) => renderRecord({ ...d, schedules: (d.schedules ?? []).map(scheduleLine).join("; ") });

const statusText = (s: Status) => renderRecord(s);

/** A scale set for people: its schedule one entry after another, and min idle now with why. */
function detailText(d: Detail): string {
  // (A coordinator older than schedules sends neither field.)
  const m = d.status?.min_idle_schedule;
  const why = !m ? "-" : `${m.min_idle} (${m.entry === null ? "its own" : `schedule ${m.entry}`}${m.until ? ` until ${m.until}` : ""})`;
  const p = d.status?.poller;
  const poller = p ? { poller_now: pollerLine(p) } : {};
  const shape = d.shape ? { shape: boundsLine(d.shape), shape_images: imagesLine(d.shape) } : { shape: null };
  return renderRecord({ ...d, ...shape, schedules: (d.schedules ?? []).map(scheduleLine).join("; "), min_idle_now: why, ...poller });
}

/** The Forgejo poller in a line: when it polled and polls next, what it saw and holds, and its backoff. */
export function pollerLine(p: NonNullable<Status["poller"]>): string {
  const parts = [
    `last poll ${p.last_poll_at ?? "never"}`,
    p.next_poll_at ? `next ${p.next_poll_at}` : "not polling (paused)",
    `${p.waiting_jobs_seen ?? "-"} waiting seen`,
    `${p.held_jobs} held`,
  ];
  if (p.failures) parts.push(`${p.failures} failed, retry at ${p.retry_at ?? "-"}: ${p.last_error ?? "?"}`);
  return parts.join("; ");
}

export const scaleSetCommands: Command[] = [
  {
    words: ["scaleset", "list"],
    summary: "List scale sets (all, or one entity's)",
    options: ENTITY_OPTS,
    run: async (ctx) => {
      const api = ctx.api();
      const entity = entityFlag(ctx.values);
      let data: ScaleSet[];
      if (!entity) data = await unwrap(api.GET("/api/v1/scalesets"));
      else {
        const path = { id: await entityId(api, entity.kind, entity.ref) };
        data =
          entity.kind === "repository"
            ? await unwrap(api.GET("/api/v1/repositories/{id}/scalesets", { params: { path } }))
            : entity.kind === "organization"
              ? await unwrap(api.GET("/api/v1/organizations/{id}/scalesets", { params: { path } }))
              : await unwrap(api.GET("/api/v1/enterprises/{id}/scalesets", { params: { path } }));
      }
      return { data, text: scaleSetTable(data) };
    },
  },
  {
    words: ["scaleset", "show"],
    summary: "Show a scale set and its object's status",
    args: ["<id|name>"],
    run: async (ctx) => {
      const data = await unwrap(ctx.api().GET("/api/v1/scalesets/{id}", { params: { path: { id: await id(ctx) } } }));
      return { data, text: detailText(data) };
    },
  },
  {
    words: ["scaleset", "create"],
    summary: "Create a scale set for a repository, organization or enterprise",
    options: {
      ...ENTITY_OPTS,
      name: { type: "string", arg: "NAME", description: "its name (required)" },
      ...FIELDS,
      // Repeatable for a shaped scale set's allowed images (NAME=ID); once otherwise.
      image: {
        type: "string",
        arg: "IMAGE|NAME=ID",
        multiple: true,
        description: "the provider's image (with --shaped: an image jobs may name, repeatable)",
      },
      ...SHAPE_OPTIONS,
      disabled: { type: "boolean", description: "create it paused" },
    },
    example:
      "edgerunner scaleset create --repo octo/app --name linux-small --provider aws --labels self-hosted,linux --max-runners 5 --image ubuntu-24.04 --flavor t3.small\n" +
      "  edgerunner scaleset create --repo octo/app --name shaped --provider aws --max-runners 20 --shaped --cpu 2-16 --ram 4-64 --arch amd64,arm64 --image ubuntu-24.04=ami-0123456789abcdef0",
    run: async (ctx) => {
      const v = ctx.values;
      const entity = entityFlag(v);
      if (!entity) throw new UsageError("--repo, --org or --enterprise is required");
      const f = fields(v);
      // Not split at commas: an image is one value however it is spelled.
      const imageArgs = [v.image ?? []].flat().filter((i): i is string => typeof i === "string");
      const shape = shapeBounds(v, imageArgs);
      if (!shape && imageArgs.length > 1) throw new UsageError("--image: give it once (several, as NAME=ID, only with --shaped)");
      const body: Create = {
        ...f,
        name: requireStr(v, "name"),
        provider_name: requireStr(v, "provider"),
        labels: f.labels ?? [],
        max_runners: int(v, "max-runners") ?? missing("max-runners"),
        ...(shape ? { shape } : { image: imageArgs[0] ?? missing("image"), flavor: requireStr(v, "flavor") }),
        ...(bool(v, "disabled") ? { enabled: false } : {}),
      };
      const api = ctx.api();
      const path = { id: await entityId(api, entity.kind, entity.ref) };
      const data =
        entity.kind === "repository"
          ? await unwrap(api.POST("/api/v1/repositories/{id}/scalesets", { params: { path }, body }))
          : entity.kind === "organization"
            ? await unwrap(api.POST("/api/v1/organizations/{id}/scalesets", { params: { path }, body }))
            : await unwrap(api.POST("/api/v1/enterprises/{id}/scalesets", { params: { path }, body }));
      return { data, text: scaleSetText(data) };
    },
  },
  {
    words: ["scaleset", "update"],
    summary: "Change a scale set",
    args: ["<id|name>"],
    options: { name: { type: "string", arg: "NAME", description: "a new name" }, ...FIELDS },
    run: async (ctx) => update(ctx, nonEmpty(fields(ctx.values), "the scale set")),
  },
  {
    words: ["scaleset", "pause"],
    summary: "Stop creating runners for a scale set (enabled=false)",
    args: ["<id|name>"],
    run: async (ctx) => update(ctx, { enabled: false }),
  },
  {
    words: ["scaleset", "resume"],
    summary: "Create runners for a scale set again (enabled=true)",
    args: ["<id|name>"],
    run: async (ctx) => update(ctx, { enabled: true }),
  },
  {
    words: ["scaleset", "reconcile"],
    summary: "Reconcile a scale set now",
    args: ["<id|name>"],
    run: async (ctx) => {
      const data = await unwrap(ctx.api().POST("/api/v1/scalesets/{id}/reconcile", { params: { path: { id: await id(ctx) } } }));
      return { data, text: statusText(data) };
    },
  },
  {
    words: ["scaleset", "reset"],
    summary: "Lift a scale set's create backoff and hard limit",
    args: ["<id|name>"],
    run: async (ctx) => {
      const data = await unwrap(ctx.api().POST("/api/v1/scalesets/{id}/reset", { params: { path: { id: await id(ctx) } } }));
      return { data, text: statusText(data) };
    },
  },
  {
    words: ["scaleset", "spend-reset"],
    summary: "Lift a scale set's spend guard until 00:00 UTC (it creates again today)",
    args: ["<id|name>"],
    run: async (ctx) => {
      const data = await unwrap(ctx.api().POST("/api/v1/scalesets/{id}/spend-guard/reset", { params: { path: { id: await id(ctx) } } }));
      return { data, text: statusText(data) };
    },
  },
  {
    words: ["scaleset", "delete"],
    summary: "Delete a scale set that has no live instances",
    args: ["<id|name>"],
    run: async (ctx) => {
      await unwrap(ctx.api().DELETE("/api/v1/scalesets/{id}", { params: { path: { id: await id(ctx) } } }));
      return deleted(`scale set ${ctx.positionals[0]}`);
    },
  },
];

/** `edgerunner instance …`: runner machines (GARM's runners), by name. */

import type { components } from "../api-types.ts";
import { unwrap } from "../client.ts";
import { bool, type Command, str } from "../command.ts";
import { scaleSetId } from "../resolve.ts";
import { machineShapeLine } from "../shape-options.ts";
import { renderRecord, renderTable } from "../table.ts";

type Instance = components["schemas"]["Instance"];
type Transition = components["schemas"]["InstanceTransition"];
type Status = Instance["status"];

/** `flavors`: each scale set's flavor, for the machines that have none of their own. */
const table = (rows: Instance[], flavors: Map<string, string>) =>
  renderTable<Instance>(
    [
      { header: "NAME", value: (i) => i.name },
      { header: "STATUS", value: (i) => i.status },
      { header: "RUNNER", value: (i) => i.runner_status },
      { header: "SCALE SET", value: (i) => i.scale_set_id },
      { header: "JOB", value: (i) => i.job_id },
      { header: "FLAVOR", value: (i) => i.flavor ?? flavors.get(i.scale_set_id) },
      { header: "PROVIDER ID", value: (i) => i.provider_id },
      { header: "UPDATED", value: (i) => i.updated_at },
    ],
    rows,
  );

const transitions = (rows: Transition[]) =>
  renderTable<Transition>(
    [
      { header: "AT", value: (t) => t.at },
      { header: "FIELD", value: (t) => t.field },
      { header: "FROM", value: (t) => t.from },
      { header: "TO", value: (t) => t.to },
      { header: "REASON", value: (t) => t.reason },
    ],
    rows,
  );

export const instanceCommands: Command[] = [
  {
    words: ["instance", "list"],
    summary: "List instances",
    options: {
      status: { type: "string", arg: "STATUS", description: "only this status (running, error, pending_delete, …)" },
      scaleset: { type: "string", arg: "ID|NAME", description: "only this scale set's" },
    },
    run: async (ctx) => {
      const api = ctx.api();
      const scaleset = str(ctx.values, "scaleset");
      const query = {
        ...(str(ctx.values, "status") ? { status: str(ctx.values, "status") as Status } : {}),
        ...(scaleset ? { scaleset_id: await scaleSetId(api, scaleset) } : {}),
      };
      const data = await unwrap(api.GET("/api/v1/instances", { params: { query } }));
      // Only a shaped machine carries its flavor; the rest are made as their scale set says.
      const flavors = new Map<string, string>();
      if (data.some((i) => i.flavor === null)) for (const s of await unwrap(api.GET("/api/v1/scalesets"))) flavors.set(s.id, s.flavor);
      return { data, text: table(data, flavors) };
    },
  },
  {
    words: ["instance", "show"],
    summary: "Show an instance and its recent status transitions",
    args: ["<name>"],
    run: async (ctx) => {
      const data = await unwrap(ctx.api().GET("/api/v1/instances/{name}", { params: { path: { name: ctx.positionals[0]! } } }));
      const { transitions: history, shape, ...rest } = data;
      const shaped = shape ? { shape: machineShapeLine(shape), shape_labels: shape.labels, flavor_reason: shape.flavor_reason } : {};
      return {
        data,
        text: renderRecord({ ...rest, ...shaped }) + (history.length ? `\nTRANSITIONS (newest first)\n${transitions(history)}` : ""),
      };
    },
  },
  {
    words: ["instance", "delete"],
    summary: "Delete an instance (the provider removes the machine)",
    args: ["<name>"],
    options: { force: { type: "boolean", description: "forget it even if the provider fails to delete it" } },
    run: async (ctx) => {
      const name = ctx.positionals[0]!;
      const query = bool(ctx.values, "force") ? { force: "true" as const } : {};
      await unwrap(ctx.api().DELETE("/api/v1/instances/{name}", { params: { path: { name }, query } }));
      return { text: `deleting instance ${name}${query.force ? " (forced)" : ""}\n` };
    },
  },
];

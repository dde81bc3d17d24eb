/** `edgerunner audit list`: the audit trail of admin writes, newest first, a page at a time. */

import type { components, paths } from "../api-types.ts";
import { unwrap } from "../client.ts";
import { type Command, int, str } from "../command.ts";
import { UsageError } from "../errors.ts";
import { renderTable } from "../table.ts";

type Entry = components["schemas"]["AuditEntry"];
type Query = NonNullable<paths["/api/v1/audit"]["get"]["parameters"]["query"]>;

const table = (rows: Entry[]) =>
  renderTable<Entry>(
    [
      { header: "AT", value: (e) => e.at },
      { header: "ACTOR", value: (e) => e.actor },
      { header: "VIA", value: (e) => e.via },
      { header: "METHOD", value: (e) => e.method },
      { header: "PATH", value: (e) => e.path },
      { header: "STATUS", value: (e) => e.status },
      { header: "RESOURCE", value: (e) => e.resource },
    ],
    rows,
  );

const METHODS = ["POST", "PUT", "PATCH", "DELETE"];

export const auditCommands: Command[] = [
  {
    words: ["audit", "list"],
    summary: "List the audit trail (every admin write), newest first",
    options: {
      actor: { type: "string", arg: "ACTOR", description: "exactly: admin_token, token:<name>, access:<email>, dashboard" },
      resource: { type: "string", arg: "ID|NAME|/PATH", description: "a resource id or name, or a path prefix starting with /" },
      method: { type: "string", arg: "METHOD", description: "POST, PUT, PATCH or DELETE" },
      status: { type: "string", arg: "CODE", description: "the answer's HTTP status" },
      since: { type: "string", arg: "TIME", description: "at or after this time (ISO 8601)" },
      until: { type: "string", arg: "TIME", description: "before this time (ISO 8601)" },
      limit: { type: "string", arg: "N", description: "entries per page (1-500, default 50)" },
      cursor: { type: "string", arg: "CURSOR", description: "the next page (printed under the table)" },
    },
    example: "edgerunner audit list --actor token:deploy-bot --since 2026-11-01T00:00:00Z",
    run: async (ctx) => {
      const v = ctx.values;
      const method = str(v, "method")?.toUpperCase();
      if (method !== undefined && !METHODS.includes(method)) throw new UsageError(`--method: one of ${METHODS.join(", ")}`);
      const query: Record<string, unknown> = Object.fromEntries(
        Object.entries({
          actor: str(v, "actor"),
          resource: str(v, "resource"),
          method,
          status: int(v, "status"),
          since: str(v, "since"),
          until: str(v, "until"),
          limit: int(v, "limit"),
          cursor: int(v, "cursor"),
        }).filter(([, x]) => x !== undefined),
      );
      const data = await unwrap(ctx.api().GET("/api/v1/audit", { params: { query: query as Query } }));
      const more = data.next_cursor ? `\nmore: edgerunner audit list --cursor ${data.next_cursor}\n` : "";
      return { data, text: table(data.entries) + more };
    },
  },
];

/** `edgerunner secrets rotate`: re-seal every stored secret with the current ENCRYPTION_KEY. */
import { unwrap } from "../client.ts";
import type { Command } from "../command.ts";
import { renderRecord } from "../table.ts";

export const secretCommands: Command[] = [
  {
    words: ["secrets", "rotate"],
    summary: "Re-seal every stored secret with the current ENCRYPTION_KEY (after a key rotation)",
    run: async (ctx) => {
      const data = await unwrap(ctx.api().POST("/api/v1/secrets/rotate"));
      return { data, text: renderRecord(data) };
    },
  },
];

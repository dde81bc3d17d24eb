// The GitHub budget (github/budget/budget.ts): written together by every reservation of a credential's share.
import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { githubCredentials } from "../github/schema";
import { scaleSets } from "../scaleset/schema";

/**
 * Each credential's share of GitHub's secondary limit in the current budget window: the points
 * reserved so far (every isolate and scale set object reserves here before it asks for JIT
 * configs), and what the last reservation got (read back by the statement that made it).
 */
export const githubBudget = sqliteTable("github_budget", {
  credentialId: text("credential_id")
    .primaryKey()
    .references(() => githubCredentials.id, { onDelete: "cascade" }),
  windowStart: integer("window_start").notNull(),
  pointsUsed: integer("points_used").notNull(),
  lastGrant: integer("last_grant").notNull(),
  /**
   * What GitHub's own secondary-limit answers taught: points a minute this credential may spend,
   * cut when GitHub refused a call the budget let through, growing back from `learned_at` to the
   * configured figure (github/budget/budget.ts, effectivePointsPerMinute). Null: nothing learned.
   */
  learnedPointsPerMinute: integer("learned_points_per_minute"),
  learnedAt: integer("learned_at"),
});

/**
 * Each scale set's last ask of its credential's budget: how many JIT configs it wanted and got,
 * and all it got in that window. Read by the next reservation on the credential to keep a fair
 * share of the window for scale sets that asked recently and fell short (github/budget/budget.ts).
 */
export const githubBudgetDemand = sqliteTable(
  "github_budget_demand",
  {
    scaleSetId: text("scale_set_id")
      .primaryKey()
      .references(() => scaleSets.id, { onDelete: "cascade" }),
    credentialId: text("credential_id")
      .notNull()
      .references(() => githubCredentials.id, { onDelete: "cascade" }),
    windowStart: integer("window_start").notNull(),
    wanted: integer("wanted").notNull(),
    granted: integer("granted").notNull(),
    grantedInWindow: integer("granted_in_window").notNull(),
  },
  (t) => [index("github_budget_demand_credential_idx").on(t.credentialId, t.windowStart)],
);

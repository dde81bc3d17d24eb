import { createApp } from "./app";
import type { Env } from "./env";
import { runRetention } from "./retention/run-retention";

export { ScaleSet } from "./scaleset/scaleset-object";

const app = createApp();

export default {
  fetch: app.fetch,
  // The Cron Trigger (wrangler.toml `[triggers]`): retention, see docs/retention.md.
  scheduled: async (controller, env) => {
    await runRetention(env.DB, env, controller.scheduledTime);
  },
} satisfies ExportedHandler<Env>;

import { createApp } from "./app";
import type { Env } from "./env";

export { ScaleSet } from "./scaleset/scaleset-object";

const app = createApp();

export default {
  fetch: app.fetch,
} satisfies ExportedHandler<Env>;

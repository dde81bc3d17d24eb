/**
 * `npm run cli:types`: writes cli/api-types.ts (the CLI's types) from the admin API's OpenAPI
 * document, built in Node from the app itself, so no server is needed.
 * test/unit/cli/api-types.test.ts fails when the checked-in file differs from what this produces.
 */
import { writeFileSync } from "node:fs";
import { API_TYPES_PATH, generateApiTypes } from "../cli/generate-api-types.ts";
import { createApp } from "../src/app";

/** The OpenAPI document the app serves at /api/v1/openapi.json. */
export async function buildOpenApiDocument(): Promise<Record<string, unknown>> {
  const res = await createApp().request("http://edgerunner.invalid/api/v1/openapi.json", {}, {} as never);
  if (!res.ok) throw new Error(`openapi.json: ${res.status} ${await res.text()}`);
  return (await res.json()) as Record<string, unknown>;
}

if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  writeFileSync(API_TYPES_PATH, await generateApiTypes(await buildOpenApiDocument()));
  process.stdout.write(`wrote ${API_TYPES_PATH.pathname}\n`);
}

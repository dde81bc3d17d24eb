import { describe, expect, it } from "vitest";
import { checkedInApiTypes, generateApiTypes } from "../../../cli/generate-api-types.ts";
import { buildOpenApiDocument } from "../../../scripts/cli-types";

// The CLI is typed from the admin API's document: a route that changes without `npm run cli:types`
// fails here (and the CLI's e2e test checks the document a running coordinator serves).
describe("cli/api-types.ts", () => {
  it("is what `npm run cli:types` generates from the current routes", async () => {
    const generated = await generateApiTypes(await buildOpenApiDocument());
    expect(generated === checkedInApiTypes(), "cli/api-types.ts is stale: run `npm run cli:types` and commit it").toBe(true);
  });

  it("covers the admin API's resources", () => {
    const types = checkedInApiTypes();
    for (const path of ["/api/v1/github/endpoints", "/api/v1/scalesets/{id}/reconcile", "/api/v1/instances/{name}", "/api/v1/jobs"]) {
      expect(types).toContain(`"${path}": {`);
    }
  });
});

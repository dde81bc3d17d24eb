/**
 * The example shim of docs/writing-a-shim.md passes the conformance kit as it stands: its fetch
 * handler served over loopback (a Worker's handler only needs Request and Response).
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, expect, it } from "vitest";
import { runConformance } from "../../shims/conformance/kit.ts";
import shim from "../../shims/example/worker.ts";

const SECRET = "example-shim-secret-0123456789";
let url: string;
let close: () => Promise<void>;
beforeAll(async () => {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", async () => {
      const body = Buffer.concat(chunks);
      const headers = Object.entries(req.headers).flatMap(([k, v]) => (v === undefined ? [] : [[k, String(v)] as [string, string]]));
      const answer = await shim.fetch(
        new Request(`http://${req.headers.host}${req.url}`, { method: req.method, headers, body: body.length ? body : undefined }),
        { SHIM_SECRET: SECRET },
      );
      res
        .writeHead(answer.status, { "content-type": answer.headers.get("content-type") ?? "application/json" })
        .end(Buffer.from(await answer.arrayBuffer()));
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  close = () => new Promise((r) => server.close(() => r()));
});
afterAll(() => close?.());

it("passes every check of the conformance kit", async () => {
  const report = await runConformance({ url, secret: SECRET, waitMs: 2000 });
  expect(report.results.filter((r) => r.status === "fail")).toEqual([]);
  // Async (it is synchronous), the five batch create checks and two of the three flavor checks (a v1 shim);
  // the third checks that its flavors route is 404.
  expect(report.skipped).toBe(8);
  expect(report.results.find((r) => r.name.startsWith("flavors: GET /v1/flavors answers"))?.status).toBe("pass");
});

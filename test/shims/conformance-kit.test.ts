/**
 * The conformance kit checked on shims whose behaviour is known: the fake shim passes it, in
 * synchronous and asynchronous mode; shims broken on purpose (a proxy in front of the fake shim
 * that skips signature checks, mixes pools up, or forgets names) fail exactly the checks that
 * cover what they break. (CI runs the kit against the shims this project ships:
 * npm run shim:conformance:all.)
 */
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../bench/harness.mjs";
import { type CheckResult, runConformance } from "../../shims/conformance/kit.ts";
import type { FlavorCatalogue } from "../../src/providers/shim-protocol.ts";
import { signRequest } from "../../src/providers/shim-signing.ts";
import { createTenant } from "../fake-shim/control.ts";
import { createsAsked } from "../fake-shim/requests.ts";
import { type FakeShim, startFakeShim } from "../fake-shim/server.ts";

const SECRET = "conformance-kit-test-secret-01234";
let shim: FakeShim;
beforeAll(async () => {
  shim = await startFakeShim();
});
afterAll(() => shim?.stop());

const tryJson = (text: string): any => {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
};

const failedChecks = (results: CheckResult[]) => results.filter((r) => r.status === "fail").map((r) => r.name);

const CATALOGUE: FlavorCatalogue = {
  currency: "EUR",
  flavors: [
    {
      name: "a.small",
      vcpus: 2,
      memory_mib: 4096,
      architecture: "arm64",
      family: "a",
      gpu: null,
      disk_gb: 40,
      price_per_hour: 0.006,
      spot: false,
    },
    {
      name: "x.small",
      vcpus: 2,
      memory_mib: 4096,
      architecture: "amd64",
      family: "x",
      gpu: null,
      disk_gb: 40,
      price_per_hour: 0.007,
      spot: false,
    },
  ],
};

interface Forwarded {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string;
}

/** A proxy in front of a shim that may change each request (and re-sign it) and each answer. */
async function proxy(
  target: string,
  change: (r: Forwarded) => Forwarded | Promise<Forwarded>,
  answer: (r: Forwarded, status: number, body: string) => string = (_r, _s, b) => b,
) {
  const base = new URL(target);
  const server: Server = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", async () => {
      const headers = Object.fromEntries(
        Object.entries(req.headers)
          .filter(([k]) => k !== "host" && k !== "content-length")
          .map(([k, v]) => [k, String(v)]),
      );
      const r = await change({ method: req.method ?? "GET", path: req.url ?? "/", headers, body: Buffer.concat(chunks).toString("utf8") });
      const out = await fetch(new URL(r.path, base.origin), { method: r.method, headers: r.headers, body: r.body || undefined });
      const text = answer(r, out.status, await out.text());
      res.writeHead(out.status, { "content-type": out.headers.get("content-type") ?? "application/json" }).end(text);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  // Same base path as the shim's, so a request passed on unchanged still verifies there.
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}${base.pathname}`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** Signs the request again with the shared secret, whatever it arrived with: a shim that checks nothing. */
const resign = async (r: Forwarded): Promise<Forwarded> => {
  const signed = await signRequest(SECRET, { method: r.method, pathWithQuery: r.path, body: r.body });
  return {
    ...r,
    headers: {
      ...r.headers,
      "x-edgerunner-timestamp": signed["X-Edgerunner-Timestamp"],
      "x-edgerunner-signature": signed["X-Edgerunner-Signature"],
    },
  };
};

describe("shim conformance kit", () => {
  it("the fake shim passes; the async check is skipped when it answers no 202, the batch and flavor checks when it has neither", async () => {
    const tenant = await createTenant(shim.url, { secret: SECRET });
    const report = await runConformance({ url: tenant.url, secret: SECRET, waitMs: 5000 });
    expect(failedChecks(report.results)).toEqual([]);
    const skipped = report.results.filter((r) => r.status === "skip").map((r) => r.name);
    expect(skipped.filter((name) => !name.startsWith("batch create:"))).toEqual([
      "flavors: GET /v1/flavors without a signature → 401",
      "flavors: a shaped create (a catalogued flavor, spot false, disk_gb null) makes the machine",
      "async: every 202 is followed by a signed, valid callback",
    ]);
    expect(skipped.filter((name) => name.startsWith("batch create:"))).toHaveLength(5);
    // Without flavors in its capabilities, the flavors route is checked to be 404.
    expect(report.results.find((r) => r.name.startsWith("flavors: GET /v1/flavors answers"))).toMatchObject({
      status: "pass",
      detail: "no flavor catalogue: 404",
    });
    expect(report.passed).toBe(27);
  });

  it("the fake shim with batch create (v1.1) passes the batch checks too", async () => {
    const tenant = await createTenant(shim.url, { secret: SECRET, batchCreateMax: 4 });
    const report = await runConformance({ url: tenant.url, secret: SECRET, waitMs: 5000 });
    expect(failedChecks(report.results)).toEqual([]);
    expect(report.results.filter((r) => r.name.startsWith("batch create:")).map((r) => r.status)).toEqual(Array(5).fill("pass"));
    expect(report.passed).toBe(32);
  });

  it("the fake shim with a flavor catalogue (v1.2) passes the flavor checks, the shaped create on a flavor it lists", async () => {
    const tenant = await createTenant(shim.url, { secret: SECRET, flavors: CATALOGUE });
    const report = await runConformance({ url: tenant.url, secret: SECRET, waitMs: 5000 });
    expect(failedChecks(report.results)).toEqual([]);
    expect(report.results.filter((r) => r.name.startsWith("flavors:")).map((r) => [r.status, r.detail])).toEqual([
      ["pass", "2 flavors (arm64, amd64), prices in EUR"],
      ["pass", ""],
      ["pass", expect.stringMatching(/^a\.small: fake-/)],
    ]);
    expect(report.results[0]!.detail).toBe("async: true, flavor catalogue");
    const shaped = createsAsked(await tenant.requests()).filter((c) => c.shape);
    expect(shaped.map((c) => [c.flavor, c.shape, c.status])).toEqual([["a.small", { disk_gb: null, spot: false }, 201]]);
    // The provider's own flavor is taken when the catalogue lists it.
    const mine = await runConformance({ url: tenant.url, secret: SECRET, waitMs: 5000, provider: { flavor: "x.small" } });
    expect(mine.results.find((r) => r.name.startsWith("flavors: a shaped create"))?.detail).toMatch(/^x\.small: /);
  });

  it("a shim whose catalogue names a flavor twice, or that says flavors: true with none, fails the catalogue check", async () => {
    const twice = await createTenant(shim.url, { secret: SECRET, flavors: CATALOGUE });
    const doubled = await proxy(
      twice.url,
      (r) => r,
      (r, status, body) => {
        if (status !== 200 || !r.path.endsWith("/v1/flavors")) return body;
        const { flavors } = tryJson(body);
        return JSON.stringify({ flavors: [...flavors, flavors[0]] });
      },
    );
    const bare = await createTenant(shim.url, { secret: SECRET });
    const boasting = await proxy(
      bare.url,
      (r) => r,
      (r, _status, body) =>
        r.path.endsWith("/v1/capabilities") ? JSON.stringify({ ...tryJson(body), interface_version: "v1.2", flavors: true }) : body,
    );
    try {
      for (const p of [doubled, boasting]) {
        const report = await runConformance({ url: p.url, secret: SECRET, waitMs: 2000 });
        expect(failedChecks(report.results)).toEqual([
          "flavors: GET /v1/flavors answers a valid, non-empty catalogue (404 when the capabilities offer none)",
        ]);
        expect(report.results.find((r) => r.name.startsWith("flavors: a shaped create"))?.status).toBe("skip");
      }
    } finally {
      await doubled.close();
      await boasting.close();
    }
  });

  it("a shim that serves its catalogue unsigned, or says v1.2 without flavors, fails the check that covers it", async () => {
    const tenant = await createTenant(shim.url, { secret: SECRET, flavors: CATALOGUE });
    const open = await proxy(tenant.url, (r) => (r.path.endsWith("/v1/flavors") ? resign(r) : r));
    const confused = await proxy(
      tenant.url,
      (r) => r,
      (r, _status, body) => (r.path.endsWith("/v1/capabilities") ? JSON.stringify({ ...tryJson(body), flavors: false }) : body),
    );
    try {
      const unsigned = await runConformance({ url: open.url, secret: SECRET, waitMs: 2000 });
      expect(failedChecks(unsigned.results)).toEqual(["flavors: GET /v1/flavors without a signature → 401"]);
      const report = await runConformance({ url: confused.url, secret: SECRET, waitMs: 2000 });
      expect(failedChecks(report.results)).toContain(
        "capabilities: interface v1, v1.1 with batch_create, or v1.2 with flavors (and batch_create or not)",
      );
    } finally {
      await open.close();
      await confused.close();
    }
  });

  it("a shim that takes batches larger than it says fails the largest-batch check", async () => {
    const tenant = await createTenant(shim.url, { secret: SECRET, batchCreateMax: 10 });
    const liar = await proxy(
      tenant.url,
      (r) => r,
      (r, _status, body) => (r.path.endsWith("/v1/capabilities") ? JSON.stringify({ ...tryJson(body), batch_create: { max: 3 } }) : body),
    );
    try {
      const report = await runConformance({ url: liar.url, secret: SECRET, waitMs: 2000 });
      expect(failedChecks(report.results)).toEqual(["batch create: more than the largest batch → 400 or 413, nothing made"]);
    } finally {
      await liar.close();
    }
  });

  it("the fake shim in async mode passes, every 202 followed by its signed callback", async () => {
    const port = await freePort();
    const tenant = await createTenant(shim.url, {
      secret: SECRET,
      callbackUrl: `http://127.0.0.1:${port}/api/v1/providers/kit/callbacks`,
      batchCreateMax: 5,
    });
    await tenant.setFaults({
      rules: [
        { operation: "create", probability: 1, action: { type: "async", complete_after_ms: 30 } },
        { operation: "delete", probability: 1, action: { type: "async", complete_after_ms: 30 } },
      ],
    });
    const report = await runConformance({ url: tenant.url, secret: SECRET, callbackPort: port, waitMs: 5000 });
    expect(failedChecks(report.results)).toEqual([]);
    const asyncCheck = report.results.at(-1)!;
    expect(asyncCheck).toMatchObject({ status: "pass", detail: expect.stringMatching(/^\d+ callbacks$/) });
    expect(Number(asyncCheck.detail.split(" ")[0])).toBeGreaterThan(8);
  });

  it("a shim that checks no signature fails every signature check (and what the machine it let through spoils)", async () => {
    const tenant = await createTenant(shim.url, { secret: SECRET });
    const p = await proxy(tenant.url, resign);
    const report = await runConformance({ url: p.url, secret: SECRET, waitMs: 2000 });
    await p.close();
    expect(failedChecks(report.results)).toEqual([
      "signature: no signature headers → 401",
      "signature: a malformed signature → 401",
      "signature: another secret → 401",
      "signature: a timestamp 10 minutes old → 401",
      "signature: a timestamp 10 minutes ahead → 401",
      "signature: a signature made for another path → 401",
      "signature: a create whose body is not the one signed → 401, nothing made",
      // …and so the create with the tampered body made a machine:
      "bad requests made nothing",
      "list: every machine of the pool, across the cloud's pages",
    ]);
  });

  it("a shim that mixes pools up fails the isolation checks", async () => {
    const tenant = await createTenant(shim.url, { secret: SECRET });
    const p = await proxy(tenant.url, async (r) => {
      const one = { ...r, headers: { ...r.headers, "x-edgerunner-pool-id": "one-pool-for-all" } };
      const body = tryJson(r.body);
      if (!body) return one;
      return resign({ ...one, body: JSON.stringify({ ...body, pool_id: "one-pool-for-all" }) });
    });
    const report = await runConformance({ url: p.url, secret: SECRET, waitMs: 2000 });
    await p.close();
    expect(failedChecks(report.results)).toEqual(
      expect.arrayContaining([
        "pool isolation: another pool cannot see, stop or delete them",
        "pool isolation: a name taken in another pool → 409 (or, async, a failure callback)",
      ]),
    );
  });

  it("a shim that forgets names makes a second machine on a repeated create, and fails idempotency", async () => {
    const tenant = await createTenant(shim.url, { secret: SECRET });
    const seen = new Set<string>();
    let n = 0;
    const p = await proxy(
      tenant.url,
      async (r) => {
        if (r.method !== "POST" || !r.path.endsWith("/v1/instances")) return r;
        const body = tryJson(r.body);
        if (typeof body?.name !== "string" || !seen.has(body.name)) {
          if (typeof body?.name === "string") seen.add(body.name);
          return r;
        }
        return resign({ ...r, body: JSON.stringify({ ...body, name: `${body.name}~${++n}` }) });
      },
      // …and answers with the name asked for, as a shim keyed on something else would.
      (_r, status, text) => (status === 201 ? text.replace(/~\d+"/, '"') : text),
    );
    const report = await runConformance({ url: p.url, secret: SECRET, waitMs: 2000 });
    await p.close();
    expect(failedChecks(report.results)).toEqual(
      expect.arrayContaining(["idempotent create: the same name again answers the same machine"]),
    );
  });
});

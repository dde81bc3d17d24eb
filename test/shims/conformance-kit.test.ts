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
import { signRequest } from "../../src/providers/shim-signing.ts";
import { createTenant } from "../fake-shim/control.ts";
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
  it("the fake shim passes; the async check is skipped when it answers no 202, the batch checks when it has no batch", async () => {
    const tenant = await createTenant(shim.url, { secret: SECRET });
    const report = await runConformance({ url: tenant.url, secret: SECRET, waitMs: 5000 });
    expect(failedChecks(report.results)).toEqual([]);
    const skipped = report.results.filter((r) => r.status === "skip").map((r) => r.name);
    expect(skipped.filter((name) => !name.startsWith("batch create:"))).toEqual([
      "async: every 202 is followed by a signed, valid callback",
    ]);
    expect(skipped.filter((name) => name.startsWith("batch create:"))).toHaveLength(5);
    expect(report.passed).toBe(26);
  });

  it("the fake shim with batch create (v1.1) passes the batch checks too", async () => {
    const tenant = await createTenant(shim.url, { secret: SECRET, batchCreateMax: 4 });
    const report = await runConformance({ url: tenant.url, secret: SECRET, waitMs: 5000 });
    expect(failedChecks(report.results)).toEqual([]);
    expect(report.results.filter((r) => r.name.startsWith("batch create:")).map((r) => r.status)).toEqual(Array(5).fill("pass"));
    expect(report.passed).toBe(31);
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

import { env, exports } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { REFUSED_ENTRIES_PER_ACTOR_PER_MINUTE as LIMIT } from "../../src/audit/refusal";
import { REFUSED_IN_WINDOW } from "../../src/db/access/audit-store";
import { ADMIN_TOKEN, api, call, unique } from "./helpers";
import { parsePrometheus } from "./prometheus-parse";

/**
 * Refused writes (4xx of an authenticated caller) leave a short, throttled trace: a summary of
 * the answer instead of the request's body, at most LIMIT entries per actor a minute, the rest
 * counted on /metrics. Each test runs in its own hour of a frozen clock (Date only), so the
 * throttle's minute never depends on how fast the requests go, and one test's flood never
 * throttles another's (the file's tests share storage).
 */

const ORIGIN = "https://edgerunner.test";
const SUPPRESSED = "edgerunner_audit_refusals_suppressed_total";

let clock = Date.UTC(2031, 0, 1);
beforeEach(() => {
  vi.spyOn(console, "log").mockImplementation(() => {});
  vi.spyOn(console, "warn").mockImplementation(() => {});
  clock += 3_600_000;
  vi.useFakeTimers({ toFake: ["Date"], now: clock });
});
afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

async function createToken(scope: "read" | "admin") {
  const res = await api.post("/api/v1/tokens", { name: unique(`t-${scope}`), scope });
  expect(res.status, res.text).toBe(201);
  return { token: res.body.token as string, actor: `token:${res.body.name}` };
}

const entriesOf = async (actor: string) =>
  (await env.DB.prepare("SELECT * FROM audit_log WHERE actor = ? ORDER BY id").bind(actor).all<Record<string, any>>()).results;

/** The suppressed-refusals counter per actor, as /metrics shows it. */
async function suppressed(): Promise<Map<string, number>> {
  const res = await exports.default.fetch(new Request(`${ORIGIN}/metrics`, { headers: { authorization: "Bearer test-metrics-token" } }));
  const text = await res.text();
  expect(res.status, text).toBe(200);
  const parsed = parsePrometheus(text);
  expect(parsed.types.get(SUPPRESSED)).toBe("counter");
  return new Map(parsed.samples.filter((s) => s.name === SUPPRESSED).map((s) => [s.labels.actor!, s.value]));
}

const provider = (over: Record<string, unknown> = {}) => ({
  name: unique("p"),
  url: "https://shim.example.com",
  secret: "a-provider-secret-long-enough",
  ...over,
});

describe("refused writes in the audit trail", () => {
  it("keeps a read token's refused write as a short summary of the answer, never its body", async () => {
    const { token, actor } = await createToken("read");
    const marker = unique("bulk");
    const res = await api.post("/api/v1/providers", provider({ description: `${marker}${"A".repeat(16_000)}` }), { token });
    expect(res.status).toBe(403);
    const [row] = await entriesOf(actor);
    expect(row).toMatchObject({
      actor,
      via: "api",
      method: "POST",
      path: "/api/v1/providers",
      resource: null,
      status: 403,
      request_id: res.body.request_id,
      changes: null,
    });
    expect(JSON.parse(row!.refusal)).toEqual({ code: "forbidden", error: res.body.error });
    expect(JSON.stringify(row)).not.toContain(marker);
    expect(JSON.stringify(row).length).toBeLessThan(1024);

    // The API shows the summary; `changes` stays null.
    const listed = await api.get(`/api/v1/audit?actor=${encodeURIComponent(actor)}`);
    expect(listed.body.entries).toEqual([
      expect.objectContaining({ status: 403, changes: null, refusal: { code: "forbidden", error: res.body.error } }),
    ]);
  });

  it("bounds what a refused write's path, method and query can put in the trail", async () => {
    const { token, actor } = await createToken("read");
    const long = "x".repeat(8_000);
    expect((await api.put(`/api/v1/providers/${long}?note=${long}`, { description: long }, { token })).status).toBe(403);
    expect((await api.post(`/api/v1/${long}`, undefined, { token })).status).toBe(403);
    // workerd passes on only the methods it knows; one the API never routes is a write all the same.
    expect((await call("PROPFIND", "/api/v1/providers", undefined, { token })).status).toBe(403);
    const rows = await entriesOf(actor);
    expect(rows).toHaveLength(3);
    for (const row of rows) {
      expect(JSON.stringify(row).length).toBeLessThan(1024);
      expect(row.changes).toBeNull();
    }
    expect(rows[0]!.path.startsWith("/api/v1/providers/xxx")).toBe(true);
    expect(rows[1]!.path.startsWith("/api/v1/xxx")).toBe(true);
    expect(rows[2]).toMatchObject({ method: "PROPFIND", path: "/api/v1/providers", status: 403 });
  });

  it(`records at most ${LIMIT} refused writes per actor a minute, counts the rest on /metrics, and leaves other actors alone`, async () => {
    const flooder = await createToken("read");
    const other = await createToken("read");
    const answers = await Promise.all(
      Array.from({ length: 50 }, () => api.post("/api/v1/providers", provider(), { token: flooder.token })),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(50).fill(403));
    expect(await entriesOf(flooder.actor)).toHaveLength(LIMIT);
    expect((await suppressed()).get(flooder.actor)).toBe(50 - LIMIT);

    // Another actor's refusals are recorded as usual, and not counted as suppressed.
    for (let i = 0; i < 3; i++) expect((await api.delete(`/api/v1/providers/${unique("p")}`, { token: other.token })).status).toBe(403);
    expect(await entriesOf(other.actor)).toHaveLength(3);
    expect((await suppressed()).has(other.actor)).toBe(false);

    // A minute later the flooder's refusals are recorded again.
    vi.setSystemTime(clock + 61_000);
    expect((await api.post("/api/v1/providers", provider(), { token: flooder.token })).status).toBe(403);
    expect(await entriesOf(flooder.actor)).toHaveLength(LIMIT + 1);
    expect((await suppressed()).get(flooder.actor)).toBe(50 - LIMIT);
  });

  it("throttles an admin's refusals too, never its accepted writes: those keep their full redacted record", async () => {
    const admin = await createToken("admin");
    for (let i = 0; i < 30; i++)
      expect((await api.post("/api/v1/providers", provider({ name: "bad name" }), { token: admin.token })).status).toBe(400);
    expect(await entriesOf(admin.actor)).toHaveLength(LIMIT);
    expect((await suppressed()).get(admin.actor)).toBe(30 - LIMIT);

    const description = "d".repeat(1_000);
    const body = provider({ description });
    const created = await api.post("/api/v1/providers", body, { token: admin.token });
    expect(created.status, created.text).toBe(201);
    for (let i = 0; i < LIMIT + 2; i++) {
      expect((await api.put(`/api/v1/providers/${body.name}`, { description: `v${i}` }, { token: admin.token })).status).toBe(200);
    }
    const rows = await entriesOf(admin.actor);
    expect(rows).toHaveLength(LIMIT + 1 + LIMIT + 2);
    expect(rows[LIMIT]).toMatchObject({ method: "POST", status: 201, resource: created.body.id, refusal: null });
    expect(JSON.parse(rows[LIMIT]!.changes)).toEqual({ body: { ...body, secret: "[redacted]" } });
    expect(rows.at(-1)).toMatchObject({ method: "PUT", status: 200, changes: `{"body":{"description":"v${LIMIT + 1}"}}` });
  });

  it("summarizes a 400 for a bad body by the admin token: the error's code and message, not the body", async () => {
    const marker = unique("bad-body");
    const res = await api.post("/api/v1/providers", provider({ name: "bad name", description: marker }));
    expect(res.status).toBe(400);
    const row = (await entriesOf("admin_token")).at(-1);
    expect(row).toMatchObject({ actor: "admin_token", method: "POST", status: 400, request_id: res.body.request_id, changes: null });
    expect(JSON.parse(row!.refusal)).toEqual({ code: "invalid_body", error: "invalid request body" });
    expect(JSON.stringify(row)).not.toContain(marker);
  });

  it("still records nothing for a request that names nobody, and counts nothing for it either", async () => {
    const before = await env.DB.prepare("SELECT (SELECT COUNT(*) FROM audit_log) AS a, (SELECT COUNT(*) FROM counters) AS c").first();
    for (let i = 0; i < 20; i++) {
      expect((await api.post("/api/v1/providers", provider(), { token: null })).status).toBe(401);
      expect((await api.post("/api/v1/providers", provider(), { token: `${ADMIN_TOKEN}-wrong` })).status).toBe(401);
    }
    expect(await env.DB.prepare("SELECT (SELECT COUNT(*) FROM audit_log) AS a, (SELECT COUNT(*) FROM counters) AS c").first()).toEqual(
      before,
    );
  });

  it("counts an actor's recent refusals from the refused-only index, not from the actor's whole history", async () => {
    const plan = await env.DB.prepare(`EXPLAIN QUERY PLAN ${REFUSED_IN_WINDOW}`).bind("admin_token", 0).all<{ detail: string }>();
    expect(plan.results.map((r) => r.detail)).toEqual([
      expect.stringMatching(/^SEARCH audit_log USING (COVERING )?INDEX audit_log_refused_idx \(actor=\? AND at>\?\)$/),
    ]);
  });
});

import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { api, expectRejectedWithoutWrites, insertInstance, seed } from "./helpers";

let scaleSetA: string;
let scaleSetB: string;

beforeAll(async () => {
  const repo = await seed.repository();
  scaleSetA = (await seed.scaleSet(`repositories/${repo.id}`)).id;
  scaleSetB = (await seed.scaleSet(`repositories/${repo.id}`)).id;
});

describe("instances", () => {
  it("lists, filters and shows one with its transitions, newest first", async () => {
    const a = await insertInstance(scaleSetA, {
      status: "running",
      runner_status: "idle",
      addresses: JSON.stringify([{ address: "10.0.0.5", type: "private" }]),
      transitions: JSON.stringify(
        [
          [null, "pending_create", "created by reconcile"],
          ["pending_create", "creating", "shim accepted"],
          ["creating", "running", "shim reported running"],
        ].map(([from, to, reason], i) => ({ at: 1_000 + i, field: "status", from, to, reason })),
      ),
    });
    const b = await insertInstance(scaleSetB, { status: "creating", runner_status: "pending" });

    const all = (await api.get("/api/v1/instances")).body.map((i: any) => i.name);
    expect(all).toEqual(expect.arrayContaining([a.name, b.name]));
    expect((await api.get("/api/v1/instances?status=creating")).body.map((i: any) => i.name)).toEqual([b.name]);
    expect((await api.get(`/api/v1/instances?scaleset_id=${scaleSetA}`)).body.map((i: any) => i.name)).toEqual([a.name]);

    const shown = await api.get(`/api/v1/instances/${a.name}`);
    expect(shown.status).toBe(200);
    expect(shown.body).toMatchObject({
      name: a.name,
      scale_set_id: scaleSetA,
      status: "running",
      runner_status: "idle",
      addresses: [{ address: "10.0.0.5", type: "private" }],
      create_attempt: 1,
    });
    expect(shown.body.transitions.map((t: any) => [t.from, t.to, t.reason])).toEqual([
      ["creating", "running", "shim reported running"],
      ["pending_create", "creating", "shim accepted"],
      [null, "pending_create", "created by reconcile"],
    ]);
  });

  it("rejects unknown filters and names", async () => {
    await expectRejectedWithoutWrites(400, () => api.get("/api/v1/instances?status=sleeping"));
    await expectRejectedWithoutWrites(400, () => api.get("/api/v1/instances?scaleset_id=abc"));
    await expectRejectedWithoutWrites(404, () => api.get("/api/v1/instances/nope"));
  });
});

describe("jobs", () => {
  beforeAll(async () => {
    const stmts = [];
    for (let id = 1; id <= 7; id++) {
      const status = id <= 3 ? "queued" : id <= 5 ? "in_progress" : "completed";
      const scaleSet = id === 7 ? null : id % 2 ? scaleSetA : scaleSetB;
      stmts.push(
        env.DB.prepare(
          "INSERT INTO jobs (id, run_id, run_attempt, name, repository, owner, labels, status, scale_set_id, queued_at, created_at, updated_at) VALUES (?, 99, 1, 'build', 'octo/app', 'octo', '[\"self-hosted\"]', ?, ?, ?, ?, ?)",
        ).bind(id, status, scaleSet, id * 1000, id * 1000, id * 1000),
      );
    }
    await env.DB.batch(stmts);
  });

  it("lists newest first with filters", async () => {
    const res = await api.get("/api/v1/jobs");
    expect(res.status).toBe(200);
    expect(res.body.jobs.map((j: any) => j.id)).toEqual([7, 6, 5, 4, 3, 2, 1]);
    expect(res.body.next_cursor).toBeNull();
    expect(res.body.jobs[0]).toMatchObject({ id: 7, matched: false, scale_set_id: null, labels: ["self-hosted"], status: "completed" });
    expect((await api.get("/api/v1/jobs?status=queued")).body.jobs.map((j: any) => j.id)).toEqual([3, 2, 1]);
    expect((await api.get(`/api/v1/jobs?scaleset_id=${scaleSetA}`)).body.jobs.map((j: any) => j.id)).toEqual([5, 3, 1]);
    expect((await api.get(`/api/v1/jobs?scaleset_id=${scaleSetB}&status=in_progress`)).body.jobs.map((j: any) => j.id)).toEqual([4]);
    expect((await api.get("/api/v1/jobs?unmatched=true")).body.jobs.map((j: any) => j.id)).toEqual([7]);
  });

  it("pages with a cursor until the last page", async () => {
    const seen: number[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res: any = await api.get(`/api/v1/jobs?limit=3${cursor ? `&cursor=${cursor}` : ""}`);
      expect(res.status).toBe(200);
      seen.push(...res.body.jobs.map((j: any) => j.id));
      cursor = res.body.next_cursor;
      pages++;
    } while (cursor);
    expect(seen).toEqual([7, 6, 5, 4, 3, 2, 1]);
    expect(pages).toBe(3);
  });

  it.each(["limit=0", "limit=501", "limit=abc", "cursor=xyz", "status=running", "unmatched=yes", "scaleset_id=1"])(
    "rejects ?%s with 400",
    async (q) => {
      const res = await expectRejectedWithoutWrites(400, () => api.get(`/api/v1/jobs?${q}`));
      expect(res.body.error).toBe("invalid request query");
      expect(res.body.code).toBe("invalid_parameter");
    },
  );

  // Query integers are decimal digits only: what Number() would also read (hex, exponents, signs,
  // spaces, fractions) is refused, not quietly taken as another number.
  it.each(["0x10", "1e1", "1e2", "%2016", "16%20", "16.0", "%2B16", "+16", "-1", "0b11", "0o7", "", "1_0"])(
    "rejects %s as a query integer (limit, cursor) with 400",
    async (v) => {
      for (const param of ["limit", "cursor"]) {
        const res = await expectRejectedWithoutWrites(400, () => api.get(`/api/v1/jobs?${param}=${v}`));
        expect(res.body.code).toBe("invalid_parameter");
        expect(res.body.details).toEqual([{ path: param, message: expect.any(String) }]);
      }
    },
  );

  it("takes decimal query integers, leading zeros included", async () => {
    expect((await api.get("/api/v1/jobs?limit=2")).body.jobs.map((j: any) => j.id)).toEqual([7, 6]);
    expect((await api.get("/api/v1/jobs?limit=16")).body.jobs).toHaveLength(7);
    expect((await api.get("/api/v1/jobs?limit=002&cursor=6")).body.jobs.map((j: any) => j.id)).toEqual([5, 4]);
  });
});

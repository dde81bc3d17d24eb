import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createDb } from "../../src/db/client";
import {
  deleteEntity,
  entityPool,
  entityUse,
  findEntityWithCredentials,
  listEntities,
  updateEntity,
} from "../../src/db/directory/entity-store";
import {
  credentialsUse,
  findCredentialsWithState,
  newCredentialsChecks,
  updateCredentials,
} from "../../src/db/github/github-credential-store";
import { endpointUse } from "../../src/db/github/github-endpoint-store";
import { writeCredentialState } from "../../src/db/github/github-state-store";
import { applyJobCorrections, jobPage } from "../../src/db/jobs/job-store";
import { instanceWithTransitions, scaleSetInstances } from "../../src/db/runner/instance-lookups";
import { scaleSetUse } from "../../src/db/scaleset/scaleset-store";
import { readSealedValues, replaceSealedValues } from "../../src/db/sealed-values-store";
import { api, insertInstance, seed, unique } from "./helpers";

// The stores behind the admin API, where a function is more than one plain query: a batch that
// answers "missing" apart from "in use", a conditional write, a page cursor, a json_each update.
// The routes' tests cover what the API answers; these pin what each function returns.

const db = () => createDb(env);

describe("credential pools", () => {
  it("an entity's pool, oldest first; replaced by an update in one batch; gone with the entity", async () => {
    const [a, b, c] = [await seed.patCredentials(), await seed.patCredentials(), await seed.patCredentials()];
    const repo = await seed.repository({ pool_credentials: [b.name, a.name] });
    expect(await entityPool(db(), repo.id)).toEqual([
      { id: b.id, name: b.name },
      { id: a.id, name: a.name },
    ]);
    await updateEntity(db(), repo.id, { updatedAt: Date.now() }, [c.id, a.id]);
    expect(await entityPool(db(), repo.id)).toEqual([
      { id: a.id, name: a.name },
      { id: c.id, name: c.name },
    ]);
    // New own credentials leave the pool in the same batch.
    await updateEntity(db(), repo.id, { credentialsId: c.id, updatedAt: Date.now() });
    expect(await entityPool(db(), repo.id)).toEqual([{ id: a.id, name: a.name }]);
    expect((await findEntityWithCredentials(db(), "repository", repo.id))!.pool).toEqual([{ id: a.id, name: a.name }]);
    expect((await listEntities(db(), "repository")).find((e) => e.entity.id === repo.id)!.pool).toEqual([{ id: a.id, name: a.name }]);
    await deleteEntity(db(), repo.id);
    expect(await entityPool(db(), repo.id)).toEqual([]);
  });
});

describe("use checks: missing is null, in use lists the users", () => {
  it("entities: their scale sets", async () => {
    const repo = await seed.repository();
    expect(await entityUse(db(), "repository", repo.id)).toEqual({ scaleSets: [] });
    expect(await entityUse(db(), "organization", repo.id)).toBeNull();
    const set = await seed.scaleSet(`repositories/${repo.id}`);
    expect(await entityUse(db(), "repository", repo.id)).toEqual({ scaleSets: [{ id: set.id, name: set.name }] });
  });

  it("credentials: the entities acting with them, the pools holding them, the live runners they minted", async () => {
    const creds = await seed.patCredentials();
    const none = { entities: [], pools: [], liveRunners: 0 };
    expect(await credentialsUse(db(), creds.id)).toEqual(none);
    const repo = await seed.repository({ credentials_name: creds.name });
    const asUser = { id: repo.id, kind: "repository", name: `octo/${repo.name}` };
    expect(await credentialsUse(db(), creds.id)).toEqual({ ...none, entities: [asUser] });
    const pooled = await seed.patCredentials();
    const org = await seed.organization({ pool_credentials: [pooled.name] });
    const set = await seed.scaleSet(`organizations/${org.id}`);
    await insertInstance(set.id, { jit_credentials_id: pooled.id });
    await insertInstance(set.id, { jit_credentials_id: pooled.id, status: "deleted" });
    expect(await credentialsUse(db(), pooled.id)).toEqual({
      entities: [],
      pools: [{ id: org.id, kind: "organization", name: org.name }],
      liveRunners: 1,
    });
    expect(await credentialsUse(db(), crypto.randomUUID())).toBeNull();
  });

  it("endpoints: their credentials' names and the entities that sit on them", async () => {
    const name = unique("ghes");
    await api.post("/api/v1/github/endpoints", {
      name,
      base_url: "https://ghes.example.com",
      api_base_url: "https://ghes.example.com/api/v3",
    });
    expect(await endpointUse(db(), name)).toEqual({ credentials: [], entities: [] });
    const creds = await seed.patCredentials({ endpoint: name });
    expect(await endpointUse(db(), name)).toEqual({ credentials: [creds.name], entities: [] });
    const repo = await seed.repository({ credentials_name: creds.name });
    expect(await endpointUse(db(), name)).toEqual({ credentials: [creds.name], entities: [{ id: repo.id, kind: "repository" }] });
    expect(await endpointUse(db(), unique("nowhere"))).toBeNull();
  });

  it("scale sets: their instances that are not deleted", async () => {
    const repo = await seed.repository();
    const set = await seed.scaleSet(`repositories/${repo.id}`);
    await insertInstance(set.id, { status: "deleted" });
    expect(await scaleSetUse(db(), set.id)).toEqual({ liveInstances: [] });
    const live = await insertInstance(set.id, { status: "running" });
    expect(await scaleSetUse(db(), set.id)).toEqual({ liveInstances: [{ name: live.name, status: "running" }] });
    expect(await scaleSetUse(db(), crypto.randomUUID())).toBeNull();
  });
});

describe("github credential store", () => {
  it("checks a new credential's endpoint and name in one answer", async () => {
    const creds = await seed.patCredentials();
    expect(await newCredentialsChecks(db(), "github.com", unique("free"))).toEqual({
      endpointExists: true,
      nameTaken: false,
      forge: "github",
    });
    expect(await newCredentialsChecks(db(), unique("nowhere"), creds.name)).toEqual({
      endpointExists: false,
      nameTaken: true,
      forge: null,
    });
  });

  it("keeps the shared state on a plain update and forgets it when the credential changes identity", async () => {
    const creds = await seed.patCredentials();
    const loaded = (await findCredentialsWithState(db(), creds.id))!.credential;
    expect(await writeCredentialState(env.DB, loaded, { health: "failing", failureReason: "bad credentials", failedAt: 5 }, 6)).toBe(true);

    const renamed = await updateCredentials(db(), creds.id, { description: "renamed", updatedAt: loaded.updatedAt }, false);
    expect(renamed.credential.description).toBe("renamed");
    expect(renamed.state).toMatchObject({ health: "failing", failureReason: "bad credentials" });

    const replaced = await updateCredentials(db(), creds.id, { secretEnc: "sealed-new", updatedAt: loaded.updatedAt + 1 }, true);
    expect(replaced).toMatchObject({ credential: { secretEnc: "sealed-new" }, state: null });
    expect((await findCredentialsWithState(db(), creds.id))!.state).toBeNull();
  });
});

describe("instance store: the admin API's reads", () => {
  it("lists a scale set's instances oldest first, and tells a missing scale set from an empty one", async () => {
    const repo = await seed.repository();
    const set = await seed.scaleSet(`repositories/${repo.id}`);
    expect(await scaleSetInstances(db(), set.id)).toEqual([]);
    const late = await insertInstance(set.id, { created_at: 2_000 });
    const early = await insertInstance(set.id, { created_at: 1_000 });
    expect((await scaleSetInstances(db(), set.id))!.map((r) => r.name)).toEqual([early.name, late.name]);
    expect(await scaleSetInstances(db(), crypto.randomUUID())).toBeNull();
  });

  it("shows an instance with its transitions newest first", async () => {
    const repo = await seed.repository();
    const set = await seed.scaleSet(`repositories/${repo.id}`);
    const inst = await insertInstance(set.id, {
      transitions: JSON.stringify([
        { at: 1, field: "status", from: null, to: "pending_create", reason: "a" },
        { at: 2, field: "status", from: "pending_create", to: "creating", reason: "b" },
      ]),
    });
    const found = await instanceWithTransitions(db(), inst.name);
    expect(found!.instance.id).toBe(inst.id);
    expect(found!.transitions.map((t) => t.reason)).toEqual(["b", "a"]);
    expect(await instanceWithTransitions(db(), unique("nobody"))).toBeNull();
  });
});

describe("job store", () => {
  const insertJob = (id: number, status: string, scaleSetId: string | null) =>
    env.DB.prepare(
      "INSERT INTO jobs (id, run_id, repository, owner, labels, status, scale_set_id, created_at, updated_at) VALUES (?, 1, 'o/r', 'o', '[]', ?, ?, 0, 0)",
    )
      .bind(id, status, scaleSetId)
      .run();

  it("pages the latest to arrive first with a cursor that ends on the last page", async () => {
    const repo = await seed.repository();
    const set = await seed.scaleSet(`repositories/${repo.id}`);
    for (const id of [71_001, 71_003, 71_002]) await insertJob(id, "queued", set.id);
    const first = await jobPage(db(), { scaleSetId: set.id }, 2);
    expect(first.jobs.map((j) => j.id)).toEqual([71_002, 71_003]);
    expect(first.nextCursor).toBe(first.jobs[1]!.seq);
    const last = await jobPage(db(), { scaleSetId: set.id, before: first.nextCursor! }, 2);
    expect(last).toMatchObject({ jobs: [{ id: 71_001 }], nextCursor: null });
  });

  it("moves jobs forward to what GitHub says, never backward", async () => {
    await insertJob(72_001, "queued", null);
    await insertJob(72_002, "completed", null);
    const seqOf = async (id: number) => (await env.DB.prepare("SELECT seq FROM jobs WHERE id = ?").bind(id).first<number>("seq"))!;
    await applyJobCorrections(
      env.DB,
      [
        { seq: await seqOf(72_001), status: "completed", conclusion: "success" },
        { seq: await seqOf(72_002), status: "in_progress", conclusion: null },
      ],
      500,
    );
    const rows = await env.DB.prepare(
      "SELECT id, status, conclusion, started_at, completed_at FROM jobs WHERE id IN (72001, 72002) ORDER BY id",
    ).all();
    expect(rows.results).toEqual([
      { id: 72_001, status: "completed", conclusion: "success", started_at: 500, completed_at: 500 },
      { id: 72_002, status: "completed", conclusion: null, started_at: null, completed_at: null },
    ]);
  });
});

describe("sealed values store", () => {
  const column = { table: "providers", key: "id", column: "secret_enc" } as const;

  it("reads each column's sealed values and replaces only the value it read", async () => {
    const a = await seed.provider();
    const b = await seed.provider();
    const [values] = await readSealedValues(env.DB, [column]);
    const sealedA = values!.find((v) => v.id === a.id)!.sealed;
    const sealedB = values!.find((v) => v.id === b.id)!.sealed;
    // b changed since it was read: its replacement must not land.
    await env.DB.prepare("UPDATE providers SET secret_enc = 'changed meanwhile' WHERE id = ?").bind(b.id).run();
    await replaceSealedValues(env.DB, [
      { column, id: a.id, read: sealedA, resealed: "resealed-a" },
      { column, id: b.id, read: sealedB, resealed: "resealed-b" },
    ]);
    const [after] = await readSealedValues(env.DB, [column]);
    expect(after!.find((v) => v.id === a.id)!.sealed).toBe("resealed-a");
    expect(after!.find((v) => v.id === b.id)!.sealed).toBe("changed meanwhile");
  });
});

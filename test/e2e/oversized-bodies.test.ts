/**
 * Oversized bodies under `wrangler dev` (issue 37): a client sending more than a route takes reads
 * its 413 JSON error, whatever the size and whether it declares a Content-Length or not, and
 * nothing is stored. Each oversized webhook is a delivery GitHub could have sent (signed with the
 * repository's secret, a valid workflow_job payload padded with JSON whitespace), so only its
 * size keeps it out; the same delivery within the limit is stored. Before the fix the coordinator
 * cancelled the unread rest, and the connection was reset under the client (ECONNRESET, or a 500
 * "Network connection lost" from wrangler dev's proxy) instead.
 */
import { createHmac, randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Coordinator, startCoordinator } from "../../bench/harness.mjs";
import { fakeWorld, type HarnessWorld } from "../../bench/harness-world.mjs";
import { type FakeGithub, startFakeGithub } from "../fake-github/server.ts";
import { type FakeShim, startFakeShim } from "../fake-shim/server.ts";
import { queuedJobPayload } from "./queued-job.ts";

const MiB = 1024 * 1024;
/** MAX_WEBHOOK_BYTES (src/routes/webhooks.ts) and MAX_CALLBACK_BYTES (src/routes/provider-callbacks.ts). */
const WEBHOOK_LIMIT = MiB;
const CALLBACK_LIMIT = 256 * 1024;
const METRICS_TOKEN = "oversized-bodies-metrics-token";
/** How many times each oversized request is sent. */
const SENDS = 3;

let github: FakeGithub;
let shim: FakeShim;
let coordinator: Coordinator;
let w: HarnessWorld;

beforeAll(async () => {
  [github, shim] = await Promise.all([startFakeGithub(), startFakeShim()]);
  coordinator = await startCoordinator({ METRICS_TOKEN });
  w = await fakeWorld(coordinator, github.url, shim.url);
});

afterAll(async () => {
  await coordinator?.stop();
  await Promise.all([github?.close(), shim?.stop()]);
});

let jobId = 9_100_000;
/** A signed workflow_job delivery for the world's repository, `size` bytes long. */
function delivery(size: number): { body: Uint8Array; headers: Record<string, string> } {
  const payload = queuedJobPayload(jobId++);
  const body = new Uint8Array(size).fill(0x20);
  const { written } = new TextEncoder().encodeInto(JSON.stringify(payload), body);
  expect(written).toBeLessThan(size);
  return {
    body,
    headers: {
      "content-type": "application/json",
      "x-github-event": "workflow_job",
      "x-github-delivery": randomUUID(),
      "x-github-enterprise-host": "github.example.test",
      "x-hub-signature-256": `sha256=${createHmac("sha256", w.webhookSecret).update(body).digest("hex")}`,
    },
  };
}

/** POSTs `body` with its Content-Length, or streamed in 64 KiB chunks without one. */
async function post(path: string, body: Uint8Array, headers: Record<string, string>, declared: boolean) {
  let at = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (at >= body.byteLength) return controller.close();
      controller.enqueue(body.subarray(at, at + 64 * 1024));
      at += 64 * 1024;
    },
  });
  const res = await fetch(`${coordinator.url}${path}`, {
    method: "POST",
    headers,
    body: declared ? body : stream,
    duplex: "half",
  } as RequestInit);
  const text = await res.text();
  let json: any = null;
  try {
    json = JSON.parse(text);
  } catch {
    // asserted below with the text
  }
  return { status: res.status, contentType: res.headers.get("content-type"), text, json };
}

/** Rows in the tables a delivery is stored in, as /metrics reads them from D1. */
async function storedRows(): Promise<{ webhook_deliveries: number; jobs: number }> {
  const res = await fetch(`${coordinator.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  const text = await res.text();
  expect(res.status, text).toBe(200);
  const rows = (table: string) => Number(new RegExp(`^edgerunner_table_rows\\{table="${table}"\\} (\\d+)$`, "m").exec(text)?.[1]);
  return { webhook_deliveries: rows("webhook_deliveries"), jobs: rows("jobs") };
}

const CASES = [2, 5, 30].flatMap((mib) => [
  [mib, "with Content-Length", true],
  [mib, "without Content-Length", false],
]) as [number, string, boolean][];

describe("oversized bodies under wrangler dev", () => {
  it.each(CASES)("a %d MiB webhook %s reads a 413 JSON error, and nothing is stored", async (mib, _how, declared) => {
    const before = await storedRows();
    // A few times each: a reset connection was a race the client lost more often than not.
    for (let attempt = 0; attempt < SENDS; attempt++) {
      const { body, headers } = delivery(mib * MiB);
      const res = await post("/webhooks/github", body, headers, declared);
      expect(res.status, res.text.slice(0, 300)).toBe(413);
      expect(res.contentType).toMatch(/^application\/json/);
      expect(res.json).toEqual({
        error: "payload too large",
        code: "payload_too_large",
        details: { limit_bytes: WEBHOOK_LIMIT },
        request_id: expect.any(String),
      });
    }
    expect(await storedRows()).toEqual(before);
  });

  it("the same delivery within the limit is stored", async () => {
    const before = await storedRows();
    const { body, headers } = delivery(WEBHOOK_LIMIT);
    const res = await post("/webhooks/github", body, headers, false);
    expect(res.status, res.text).toBe(200);
    expect(await storedRows()).toEqual({ webhook_deliveries: before.webhook_deliveries + 1, jobs: before.jobs + 1 });
  });

  it.each([
    ["with Content-Length", true],
    ["without Content-Length", false],
  ])("a 5 MiB provider callback %s reads a 413 JSON error", async (_how, declared) => {
    for (let attempt = 0; attempt < SENDS; attempt++) {
      const res = await post(`/api/v1/providers/${w.provider}/callbacks`, new Uint8Array(5 * MiB).fill(0x20), {}, declared);
      expect(res.status, res.text.slice(0, 300)).toBe(413);
      expect(res.json).toMatchObject({ code: "payload_too_large", details: { max_bytes: CALLBACK_LIMIT } });
    }
  });
});

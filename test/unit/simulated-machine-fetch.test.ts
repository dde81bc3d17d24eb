import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { machineFetch } from "../../shims/simulator/machine.ts";

// The simulated machines of the e2e scenarios call the coordinator the way curl --retry does.
// Scenario B kills the coordinator mid-run: a transfer cut after the headers must be retried,
// not end the machine's bootstrap (it then sat unbootstrapped until the bootstrap timeout).

let server: Server | undefined;
afterEach(() => new Promise<void>((done) => (server ? server.close(() => done()) : done())));

async function serve(handler: (attempt: number, res: import("node:http").ServerResponse) => void): Promise<string> {
  let attempts = 0;
  server = createServer((_req, res) => handler(++attempts, res));
  await new Promise<void>((ready) => server!.listen(0, "127.0.0.1", ready));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/metadata`;
}

describe("a simulated machine's calls", () => {
  it("retry a response whose body is cut after the headers, and return the whole body", async () => {
    const url = await serve((attempt, res) => {
      if (attempt === 1) {
        res.writeHead(200, { "content-type": "application/json", "content-length": "100" });
        res.write('{"callback-url":');
        setTimeout(() => res.destroy(), 20);
        return;
      }
      res.writeHead(200, { "content-type": "application/json" }).end('{"callback-url":"http://x"}');
    });
    const res = await machineFetch(url, {}, () => true);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ "callback-url": "http://x" });
  });

  it("retry 5xx answers, and hand back 4xx answers and bodiless statuses as they are", async () => {
    const statuses = [503, 204];
    const url = await serve((attempt, res) => res.writeHead(statuses[attempt - 1] ?? 404).end(attempt === 1 ? "busy" : undefined));
    const res = await machineFetch(url, { method: "POST" }, () => true);
    expect(res.status).toBe(204);
    expect(await res.text()).toBe("");
  });
});

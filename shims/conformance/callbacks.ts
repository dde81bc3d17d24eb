import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { ShimCallback as CallbackSchema, type ShimCallback } from "../../src/providers/shim-protocol.ts";
import { verifySignature } from "../../src/providers/shim-signing.ts";

/**
 * The kit standing in for the coordinator's callback route: every POST is kept with whether
 * its signature and body are right, and answered as the coordinator would (200 accepted, 401 bad
 * signature, 400 bad body). Machines that boot and call the metadata URL get 401.
 */

export interface ReceivedCallback {
  path: string;
  signature_ok: boolean;
  /** Why the body is not a valid callback, or null. */
  problem: string | null;
  callback: ShimCallback | null;
}

export interface CallbackInbox {
  url: string;
  /** Listening on the port the shim was told about (--callback-port), so async callbacks can arrive. */
  fixedPort: boolean;
  received: ReceivedCallback[];
  /** The valid callback for an operation, if it came. */
  find(operationId: string): ShimCallback | undefined;
  close(): Promise<void>;
}

export async function listenForCallbacks(port: number, secret: string): Promise<CallbackInbox> {
  const received: ReceivedCallback[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", async () => {
      const path = req.url ?? "/";
      if (req.method !== "POST" || !path.endsWith("/callbacks"))
        return res.writeHead(401, { "content-type": "application/json" }).end('{"error":"unauthorized"}');
      const body = Buffer.concat(chunks);
      const check = await verifySignature(
        secret,
        { method: "POST", pathWithQuery: path, body: new Uint8Array(body) },
        { timestamp: String(req.headers["x-edgerunner-timestamp"] ?? ""), signature: String(req.headers["x-edgerunner-signature"] ?? "") },
      );
      let callback: ShimCallback | null = null;
      let problem: string | null = null;
      try {
        const parsed = CallbackSchema.safeParse(JSON.parse(body.toString("utf8")));
        if (parsed.success) callback = parsed.data;
        else problem = parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ");
      } catch {
        problem = "body is not JSON";
      }
      if (!String(req.headers["content-type"] ?? "").startsWith("application/json"))
        problem = `Content-Type is ${req.headers["content-type"] ?? "missing"}, not application/json`;
      received.push({ path, signature_ok: check.ok, problem, callback });
      const status = !check.ok ? 401 : problem ? 400 : 200;
      res
        .writeHead(status, { "content-type": "application/json" })
        .end(status === 200 ? '{"accepted":true}' : JSON.stringify({ error: problem ?? "unauthorized" }));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve());
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    fixedPort: port !== 0,
    received,
    find: (id) => received.find((r) => r.signature_ok && r.callback?.operation_id === id)?.callback ?? undefined,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

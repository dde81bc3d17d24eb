/**
 * The coordinator's provider routes (GET, POST, PUT /api/v1/providers), for the tests of `setup
 * --shim`: a local server answering with the API's shapes and its refusals, among them the 409
 * `in_use` for a new url without a new secret while scale sets use the provider
 * (src/routes/providers.ts). It keeps the providers and what it was sent, for the test to read.
 */
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface FakeProvider {
  name: string;
  url: string;
  secret: string;
  /** Scale sets use it: its url then moves only with a new secret. */
  inUse?: boolean;
}

export interface ProviderApi {
  url: string;
  providers: Map<string, FakeProvider>;
  seen: { method: string; path: string; auth: string | undefined; body: unknown }[];
  close: () => void;
}

async function readBody(req: IncomingMessage): Promise<Record<string, string> | undefined> {
  let text = "";
  for await (const c of req) text += c;
  return text ? JSON.parse(text) : undefined;
}

const view = (p: FakeProvider) => ({
  id: "9b2f6c1e-1111-4222-8333-444455556666",
  name: p.name,
  url: p.url,
  description: "",
  timeout_seconds: 30,
  has_secret: true,
  created_at: "2026-11-27T00:00:00Z",
  updated_at: "2026-11-27T00:00:00Z",
});

export async function startProviderApi(): Promise<ProviderApi> {
  const providers = new Map<string, FakeProvider>();
  const seen: ProviderApi["seen"] = [];
  const server: Server = createServer(async (req, res) => {
    const sent = await readBody(req);
    seen.push({ method: req.method!, path: req.url!, auth: req.headers.authorization, body: sent });
    const reply = (status: number, data: unknown) =>
      res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(data));
    if (req.method === "POST" && req.url === "/api/v1/providers" && sent) {
      if (providers.has(sent.name!)) return reply(409, { error: "a provider with this name exists", code: "conflict", request_id: "r1" });
      const created = { name: sent.name!, url: sent.url!, secret: sent.secret! };
      providers.set(created.name, created);
      return reply(201, view(created));
    }
    const name = /^\/api\/v1\/providers\/([^/]+)$/.exec(req.url!)?.[1];
    const found = name ? providers.get(decodeURIComponent(name)) : undefined;
    if (!found) return reply(404, { error: "provider not found", code: "not_found", details: { name }, request_id: "r1" });
    if (req.method === "PUT" && sent) {
      const newSecret = sent.secret !== undefined && sent.secret !== found.secret;
      if (found.inUse && sent.url !== undefined && sent.url !== found.url && !newSecret)
        return reply(409, { error: "provider is in use", code: "in_use", details: { fields: ["url"] }, request_id: "r1" });
      Object.assign(found, sent);
    }
    return reply(200, view(found));
  });
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    providers,
    seen,
    close: () => server.close(),
  };
}

/**
 * vitest globalSetup (runs in Node): a stand-in for a Cloudflare Access team's certs endpoint
 * (`/cdn-cgi/access/certs`, a JWKS). It generates one RSA key for the test run, serves the
 * public half, and hands the private half to the tests (inject("accessSigningJwk")), which sign
 * the Access JWTs they send; the coordinator is pointed at it with ACCESS_CERTS_URL.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair } from "jose";
import type { TestProject } from "vitest/node";

export const ACCESS_KID = "fake-access-key-1";

export default async function setup(project: TestProject) {
  const { publicKey, privateKey } = await generateKeyPair("RS256", { extractable: true });
  const publicJwk = { ...(await exportJWK(publicKey)), kid: ACCESS_KID, alg: "RS256", use: "sig" };
  const privateJwk = { ...(await exportJWK(privateKey)), kid: ACCESS_KID, alg: "RS256" };
  const server = createServer((req, res) => {
    if (req.method === "GET" && req.url === "/cdn-cgi/access/certs") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ keys: [publicJwk], public_cert: { kid: ACCESS_KID }, public_certs: [] }));
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  project.provide("accessCertsUrl", `http://127.0.0.1:${port}/cdn-cgi/access/certs`);
  project.provide("accessSigningJwk", privateJwk as Record<string, unknown>);
  return () => new Promise<void>((resolve) => server.close(() => resolve()));
}

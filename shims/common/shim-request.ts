import { BootstrapInstance } from "../../src/providers/shim-protocol.ts";

/**
 * Reading a protocol request in a provider shim Worker (shared by the cloud shims): the body,
 * bounded, and the pool's extra specs header. Pure apart from reading the body.
 */

export const MAX_BODY_BYTES = 1024 * 1024;

/** X-Edgerunner-Pool-Extra-Specs: standard base64 of a JSON value, or not ok when it is not. */
export function decodeSpecsHeader(value: string): { ok: true; value: unknown } | { ok: false } {
  try {
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(value) || value.length % 4 !== 0) return { ok: false };
    return {
      ok: true,
      value: JSON.parse(
        new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(Uint8Array.from(atob(value), (c) => c.charCodeAt(0))),
      ),
    };
  } catch {
    return { ok: false };
  }
}

/** The body as text, or null when it is over MAX_BODY_BYTES. */
export async function readBody(request: Request): Promise<string | null> {
  const bytes = new Uint8Array(await request.arrayBuffer());
  return bytes.length > MAX_BODY_BYTES ? null : new TextDecoder().decode(bytes);
}

/**
 * A create's body: JSON, a BootstrapInstance, for the pool in the headers. `problems` starts with
 * what the shared rules found; the shim adds its cloud's and refuses with them all at once.
 */
export function readCreateBody(
  rawBody: string,
  poolId: string,
): { ok: true; instance: BootstrapInstance; problems: string[] } | { ok: false; error: string; details?: string[] } {
  let json: unknown;
  try {
    json = JSON.parse(rawBody);
  } catch {
    return { ok: false, error: "body is not JSON" };
  }
  const parsed = BootstrapInstance.safeParse(json);
  if (!parsed.success)
    return {
      ok: false,
      error: "body is not a BootstrapInstance",
      details: parsed.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`),
    };
  const problems: string[] = [];
  if (parsed.data.pool_id !== poolId) problems.push("pool_id in the body differs from X-Edgerunner-Pool-Id");
  return { ok: true, instance: parsed.data, problems };
}

/** Text as base64 of its UTF-8 (a ProviderInstance's provider_fault). */
export const utf8base64 = (text: string): string => btoa(String.fromCharCode(...new TextEncoder().encode(text)));

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

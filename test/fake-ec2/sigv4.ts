import { createHash, createHmac, timingSafeEqual } from "node:crypto";

/**
 * AWS Signature Version 4, checked the way AWS checks it: the canonical request is rebuilt from
 * what arrived (method, path, query, the headers the client said it signed, the body's hash),
 * the signing key derived from the secret for the date, region and service of the credential
 * scope, and the signature compared. Written with node:crypto only, independently of aws4fetch
 * and of AWS's SDK, so both are cross-checked against a third implementation of the spec.
 */

export interface SigV4Request {
  method: string;
  /** The request target as received (path and query, percent-encoding untouched). */
  target: string;
  /** Node's rawHeaders: names and values alternating, as sent. */
  rawHeaders: string[];
  body: Buffer;
}

export interface SigV4Credentials {
  secretAccessKey: string;
  region: string;
  sessionToken?: string;
}

export type SigV4Check = { ok: true; accessKeyId: string } | { ok: false; status: number; code: string; message: string };

/** EC2 refuses requests signed more than 15 minutes before or after its clock. */
export const MAX_SKEW_MS = 15 * 60 * 1000;

const sha256 = (data: string | Buffer) => createHash("sha256").update(data).digest("hex");
const hmac = (key: string | Buffer, data: string) => createHmac("sha256", key).update(data).digest();

/** RFC 3986 encoding, upper-case hex, unreserved characters left alone (AWS's UriEncode). */
export function uriEncode(s: string): string {
  return encodeURIComponent(s).replace(/[!'()*]/g, (c) => "%" + c.charCodeAt(0).toString(16).toUpperCase());
}

const decode = (s: string) => {
  try {
    return decodeURIComponent(s.replace(/\+/g, "%20"));
  } catch {
    return s;
  }
};

/** The canonical URI for every service but S3: the normalized path, each segment encoded once more. */
function canonicalUri(path: string): string {
  const out: string[] = [];
  for (const seg of path.split("/")) {
    if (seg === "" || seg === ".") continue;
    if (seg === "..") out.pop();
    else out.push(seg);
  }
  const joined = "/" + out.map(uriEncode).join("/");
  return path.endsWith("/") && out.length ? joined + "/" : joined;
}

function canonicalQuery(query: string): string {
  if (!query) return "";
  return query
    .split("&")
    .filter(Boolean)
    .map((pair) => {
      const i = pair.indexOf("=");
      const [k, v] = i < 0 ? [pair, ""] : [pair.slice(0, i), pair.slice(i + 1)];
      return [uriEncode(decode(k)), uriEncode(decode(v))] as const;
    })
    .sort(([k1, v1], [k2, v2]) => (k1 < k2 ? -1 : k1 > k2 ? 1 : v1 < v2 ? -1 : v1 > v2 ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join("&");
}

/** Header values by lower-case name; repeated headers joined with commas, as SigV4 wants. */
function headerMap(raw: string[]): Map<string, string> {
  const m = new Map<string, string>();
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    const value = raw[i + 1]!.trim().replace(/\s+/g, " ");
    m.set(name, m.has(name) ? `${m.get(name)},${value}` : value);
  }
  return m;
}

const AUTH = /^AWS4-HMAC-SHA256\s+Credential=([^,\s]+)\s*,\s*SignedHeaders=([^,\s]+)\s*,\s*Signature=([0-9a-fA-F]+)\s*$/;

export function signingKey(secret: string, date: string, region: string, service: string): Buffer {
  return hmac(hmac(hmac(hmac(`AWS4${secret}`, date), region), service), "aws4_request");
}

export function verifySigV4(
  req: SigV4Request,
  service: string,
  lookup: (accessKeyId: string) => SigV4Credentials | undefined,
  now: number = Date.now(),
): SigV4Check {
  const headers = headerMap(req.rawHeaders);
  const auth = headers.get("authorization");
  if (!auth)
    return {
      ok: false,
      status: 401,
      code: "MissingAuthenticationToken",
      message: "The request must contain either a valid (registered) AWS access key ID or X.509 certificate.",
    };
  const m = AUTH.exec(auth);
  if (!m)
    return {
      ok: false,
      status: 400,
      code: "IncompleteSignature",
      message: "Authorization header requires 'Credential', 'SignedHeaders' and 'Signature' parameters for AWS4-HMAC-SHA256.",
    };
  const [, credential, signedHeaders, signature] = m as unknown as [string, string, string, string];
  const scope = credential.split("/");
  if (scope.length !== 5 || scope[4] !== "aws4_request")
    return {
      ok: false,
      status: 400,
      code: "IncompleteSignature",
      message: `Credential should be scoped to a valid date, region and service: ${credential}`,
    };
  const [accessKeyId, date, region, svc] = scope as [string, string, string, string, string];
  const creds = lookup(accessKeyId);
  if (!creds)
    return { ok: false, status: 401, code: "AuthFailure", message: "AWS was not able to validate the provided access credentials" };

  const amzDate = headers.get("x-amz-date");
  if (!amzDate || !/^\d{8}T\d{6}Z$/.test(amzDate))
    return {
      ok: false,
      status: 400,
      code: "IncompleteSignature",
      message: "The request must carry an X-Amz-Date header (YYYYMMDDTHHMMSSZ).",
    };
  const signedAt = Date.UTC(
    +amzDate.slice(0, 4),
    +amzDate.slice(4, 6) - 1,
    +amzDate.slice(6, 8),
    +amzDate.slice(9, 11),
    +amzDate.slice(11, 13),
    +amzDate.slice(13, 15),
  );
  if (Math.abs(now - signedAt) > MAX_SKEW_MS)
    return { ok: false, status: 400, code: "RequestExpired", message: `Request has expired. Timestamp date is ${amzDate}.` };
  if (date !== amzDate.slice(0, 8) || region !== creds.region || svc !== service) {
    return {
      ok: false,
      status: 401,
      code: "AuthFailure",
      message: `Credential should be scoped to ${amzDate.slice(0, 8)}/${creds.region}/${service}, not ${date}/${region}/${svc}.`,
    };
  }

  const names = signedHeaders.split(";");
  if (names.some((n, i) => n !== n.toLowerCase() || (i > 0 && names[i - 1]! >= n))) {
    return { ok: false, status: 400, code: "IncompleteSignature", message: "SignedHeaders must be lower case and sorted." };
  }
  for (const required of ["host", "x-amz-date", ...(headers.has("x-amz-security-token") ? ["x-amz-security-token"] : [])]) {
    if (!names.includes(required))
      return { ok: false, status: 401, code: "AuthFailure", message: `The ${required} header must be signed.` };
  }
  if ((headers.get("x-amz-security-token") ?? undefined) !== creds.sessionToken) {
    return { ok: false, status: 401, code: "AuthFailure", message: "AWS was not able to validate the provided access credentials" };
  }
  const payloadHash = sha256(req.body);
  const claimed = headers.get("x-amz-content-sha256");
  if (claimed && claimed !== payloadHash)
    return {
      ok: false,
      status: 400,
      code: "XAmzContentSHA256Mismatch",
      message: "The provided 'x-amz-content-sha256' header does not match what was computed.",
    };

  const q = req.target.indexOf("?");
  const path = q < 0 ? req.target : req.target.slice(0, q);
  const canonicalRequest = [
    req.method.toUpperCase(),
    canonicalUri(path),
    canonicalQuery(q < 0 ? "" : req.target.slice(q + 1)),
    names.map((n) => `${n}:${headers.get(n) ?? ""}\n`).join(""),
    signedHeaders,
    payloadHash,
  ].join("\n");
  const stringToSign = ["AWS4-HMAC-SHA256", amzDate, `${date}/${region}/${svc}/aws4_request`, sha256(canonicalRequest)].join("\n");
  const expected = Buffer.from(
    createHmac("sha256", signingKey(creds.secretAccessKey, date, region, svc))
      .update(stringToSign)
      .digest("hex"),
  );
  const given = Buffer.from(signature.toLowerCase());
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    return { ok: false, status: 401, code: "AuthFailure", message: "AWS was not able to validate the provided access credentials" };
  }
  return { ok: true, accessKeyId };
}

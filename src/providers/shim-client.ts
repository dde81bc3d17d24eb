import { BodyTooLarge, readLimitedBody } from "../http/limited-body";
import { measuredFetch } from "../lib/invocation-cost";
import { logAt } from "../observability/log";
import { countShimCall } from "../observability/op-counters";
import { shimCallLevel } from "../scaleset/log-levels";
import type { MachineCreated, MachineDeleted } from "../scaleset/ports";
import { rememberedBatchMax } from "./shim-capability-memo";
import { classifyShimStatus, classifyTransportError, type ShimError, type ShimResult } from "./shim-errors";
import {
  type BatchCreateItemResult,
  type BatchCreateRequest,
  BatchCreateResponse,
  type BootstrapInstance,
  type FlavorCatalogue,
  OperationAccepted,
  ShimCapabilities,
  ShimHeaders,
  type ValidProviderInstance,
  validateFlavorCatalogue,
  validateProviderInstance,
  validateProviderInstanceList,
} from "./shim-protocol";
import { requestTarget, signRequest } from "./shim-signing";

export type { ShimError, ShimErrorKind, ShimResult } from "./shim-errors";

/** A provider shim to call. The secret is the opened (plaintext) one: see providers.secret_enc. */
export interface ShimTarget {
  name: string;
  url: string;
  secret: string;
}

/** Who is asking, sent with every request (GARM's GARM_CONTROLLER_ID, GARM_POOL_ID, GARM_POOL_EXTRASPECS). */
export interface ShimPoolContext {
  controllerId: string;
  poolId: string;
  extraSpecs: Record<string, unknown>;
}

export interface ShimClientOptions {
  /** Per call, covering connect, answer and body. Default 30 s (each provider sets its own). */
  timeoutMs?: number;
  fetch?: typeof fetch;
  /** Clock for the signature timestamp (unix ms). */
  now?: () => number;
}

export const DEFAULT_SHIM_TIMEOUT_MS = 30_000;
/** How much of a shim's error answer goes into the error message (and so into logs and the instance's fault). */
const MAX_ERROR_SNIPPET = 512;
/** A list of 10,000 machines is about 3 MiB; anything far bigger is a broken shim, not data to hold in memory. */
export const MAX_SHIM_RESPONSE_BYTES = 16 * 1024 * 1024;

export type ShimClient = ReturnType<typeof createShimClient>;

interface Answer {
  status: number;
  text: string;
  /** Where a redirect pointed (resolved against the request's URL), never followed. */
  location?: string | null;
}

function base64Json(value: unknown): string {
  const bytes = new TextEncoder().encode(JSON.stringify(value));
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary);
}

/**
 * For a redirect (3xx with a Location), the origin it points to, resolved against the request's
 * URL: `null` when it does not parse; `undefined` for any other answer. Only the origin, as the
 * rest of a Location may carry what a log should not.
 */
function redirectOrigin(res: Response, url: URL): string | null | undefined {
  const location = res.status >= 300 && res.status < 400 ? res.headers.get("location") : null;
  if (location === null) return undefined;
  try {
    return new URL(location, url).origin;
  } catch {
    return null;
  }
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

/**
 * The thin HTTP client for one shim and one scale set. Never throws: every outcome is a
 * ShimResult whose error kind tells the caller what to do. Logs one `shim_call` line per call,
 * without bodies (a create carries the instance's token) and without the secret.
 */
export function createShimClient(target: ShimTarget, pool: ShimPoolContext, opts: ShimClientOptions = {}) {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_SHIM_TIMEOUT_MS;
  const doFetch = opts.fetch ?? measuredFetch;
  const now = opts.now ?? Date.now;
  const base = target.url.replace(/\/+$/, "");
  const extraSpecsHeader = base64Json(pool.extraSpecs ?? {});

  /** Strings that must never reach a log line or an error message. */
  const redact = (text: string, secrets: string[]) =>
    secrets.filter((s) => s.length >= 8).reduce((t, s) => t.split(s).join("[redacted]"), text);

  async function send(
    operation: string,
    method: string,
    path: string,
    body: string | undefined,
    instance: string | undefined,
    // biome-ignore lint/suspicious/noExplicitAny: each operation returns its own result type; the public methods type it
    handle: (answer: Answer) => ShimResult<any>,
    secrets: string[] = [],
    /** Extra fields for the call's log line (a batch's size). */
    logFields: Record<string, number> = {},
    // biome-ignore lint/suspicious/noExplicitAny: each operation returns its own result type; the public methods type it
  ): Promise<ShimResult<any>> {
    const started = Date.now();
    let status: number | undefined;
    // biome-ignore lint/suspicious/noExplicitAny: each operation returns its own result type; the public methods type it
    let result: ShimResult<any>;
    let url: URL;
    try {
      url = new URL(base + path);
    } catch {
      // A provider URL that does not parse will not parse next time either.
      const error: ShimError = { kind: "permanent", message: `${operation}: provider URL is not a valid URL` };
      logCall(operation, instance, undefined, started, { ok: false, error }, logFields);
      return { ok: false, error };
    }
    try {
      const headers: Record<string, string> = {
        accept: "application/json",
        "user-agent": "edgerunner-shim-client/1",
        [ShimHeaders.controllerId]: pool.controllerId,
        [ShimHeaders.poolId]: pool.poolId,
        [ShimHeaders.poolExtraSpecs]: extraSpecsHeader,
        ...(await signRequest(target.secret, { method, pathWithQuery: requestTarget(url), body: body ?? "" }, now())),
      };
      if (body !== undefined) headers["content-type"] = "application/json";
      const res = await doFetch(url, { method, headers, body, redirect: "manual", signal: AbortSignal.timeout(timeoutMs) });
      status = res.status;
      const text = new TextDecoder().decode(await readLimitedBody(res, MAX_SHIM_RESPONSE_BYTES));
      result = handle({ status, text, location: redirectOrigin(res, url) });
    } catch (err) {
      result =
        err instanceof BodyTooLarge
          ? {
              ok: false,
              error: { kind: "malformed", message: `${operation}: answer larger than ${MAX_SHIM_RESPONSE_BYTES} bytes`, status: status! },
            }
          : { ok: false, error: transportFailure(operation, err, status) };
    }
    if (!result.ok) result = { ok: false, error: { ...result.error, message: redact(result.error.message, [target.secret, ...secrets]) } };
    logCall(operation, instance, status, started, result, logFields);
    return result;
  }

  function transportFailure(operation: string, err: unknown, status: number | undefined): ShimError {
    const e = classifyTransportError(err, timeoutMs);
    return { ...e, message: `${operation}: ${e.message}`, ...(status === undefined ? {} : { status }) };
  }

  function logCall(
    operation: string,
    instance: string | undefined,
    status: number | undefined,
    started: number,
    result: ShimResult<unknown>,
    logFields: Record<string, number>,
  ) {
    countShimCall(operation, target.name, result.ok);
    logAt(shimCallLevel(result.ok), {
      event: "shim_call",
      provider: target.name,
      scale_set: pool.poolId,
      operation,
      ...(instance === undefined ? {} : { instance }),
      ...logFields,
      status: status ?? null,
      duration_ms: Date.now() - started,
      ...(result.ok ? {} : { error_kind: result.error.kind, error: result.error.message }),
    });
  }

  const fail = (kind: ShimError["kind"], message: string, status?: number): ShimResult<never> => ({
    ok: false,
    error: { kind, message, ...(status === undefined ? {} : { status }) },
  });

  /** The failure a non-2xx answer means, with whatever the shim said about it. */
  function httpFailure(operation: string, a: Answer): ShimResult<never> {
    const kind = classifyShimStatus(a.status) ?? "malformed";
    if (a.location !== undefined) {
      // Signed for this provider's URL only: the request is never sent on, wherever the shim points.
      const to = a.location ? ` to ${a.location}` : "";
      return fail(
        kind,
        `${operation}: shim answered ${a.status}: a redirect${to}, not followed (requests go only to the provider's URL)`,
        a.status,
      );
    }
    const parsed = parseJson(a.text);
    const said =
      parsed.ok && parsed.value && typeof parsed.value === "object" && typeof (parsed.value as { error?: unknown }).error === "string"
        ? (parsed.value as { error: string }).error
        : a.text;
    const snippet = said.trim().slice(0, MAX_ERROR_SNIPPET);
    return fail(kind, `${operation}: shim answered ${a.status}${snippet ? `: ${snippet}` : ""}`, a.status);
  }

  function instanceBody(operation: string, a: Answer): ShimResult<ValidProviderInstance> {
    const parsed = parseJson(a.text);
    if (!parsed.ok) return fail("malformed", `${operation}: shim answered ${a.status} with a body that is not JSON`, a.status);
    const valid = validateProviderInstance(parsed.value);
    if (!valid.ok) return fail("malformed", `${operation}: invalid ProviderInstance: ${valid.problems.join("; ")}`, a.status);
    return { ok: true, value: valid.value };
  }

  function accepted(operation: string, a: Answer): ShimResult<{ state: "accepted"; operationId: string }> {
    const parsed = parseJson(a.text);
    const op = parsed.ok ? OperationAccepted.safeParse(parsed.value) : null;
    if (!op?.success) return fail("malformed", `${operation}: shim answered 202 without an operation_id`, a.status);
    return { ok: true, value: { state: "accepted", operationId: op.data.operation_id } };
  }

  const instancePath = (id: string) => `/v1/instances/${encodeURIComponent(id)}`;

  /** What the shim's answer to creating `b` means: a single create's answer, or one item of a batch's. */
  function createAnswer(op: string, b: BootstrapInstance, a: Answer): ShimResult<MachineCreated> {
    if (a.status === 202) return accepted(op, a);
    if (a.status === 200 || a.status === 201) {
      const got = instanceBody(op, a);
      if (!got.ok) return got;
      if (got.value.name !== b.name) {
        return fail("malformed", `${op}: shim answered for instance '${got.value.name}', not '${b.name}'`, a.status);
      }
      return { ok: true, value: { state: "done", instance: got.value } };
    }
    if (a.status >= 200 && a.status < 300) return fail("malformed", `${op}: unexpected status ${a.status}`, a.status);
    return httpFailure(op, a);
  }

  return {
    createInstance(b: BootstrapInstance): Promise<ShimResult<MachineCreated>> {
      const op = "create_instance";
      return send(op, "POST", "/v1/instances", JSON.stringify(b), b.name, (a) => createAnswer(op, b, a), [b["instance-token"]]);
    },

    /**
     * v1.1 `POST /v1/instances:batch`: one request for many creates (call it only when the
     * shim's capabilities offer it, with at most its `max`). One result per bootstrap, in
     * order, each read as the answer to its single create; or the failure of the whole request
     * (a retry is safe: creates are idempotent on the name).
     */
    createInstances(bs: BootstrapInstance[]): Promise<ShimResult<ShimResult<MachineCreated>[]>> {
      const op = "create_instances_batch";
      const secrets = [target.secret, ...bs.map((b) => b["instance-token"])];
      return send(
        op,
        "POST",
        "/v1/instances:batch",
        JSON.stringify({ instances: bs } satisfies BatchCreateRequest),
        undefined,
        (a) => {
          if (a.status !== 200) {
            if (a.status >= 200 && a.status < 300) return fail("malformed", `${op}: unexpected status ${a.status}`, a.status);
            return httpFailure(op, a);
          }
          const parsed = parseJson(a.text);
          const body = parsed.ok ? BatchCreateResponse.safeParse(parsed.value) : null;
          if (!body?.success) return fail("malformed", `${op}: shim answered 200 without {results: [{name, status, body}]}`, a.status);
          const byName = new Map<string, BatchCreateItemResult[]>();
          for (const r of body.data.results) byName.set(r.name, [...(byName.get(r.name) ?? []), r]);
          return {
            ok: true,
            value: bs.map((b) => {
              const mine = byName.get(b.name) ?? [];
              if (mine.length !== 1) {
                return fail("malformed", `${op}: shim answered ${mine.length} results for instance '${b.name}', not 1`, a.status);
              }
              const item = createAnswer(op, b, { status: mine[0]!.status, text: JSON.stringify(mine[0]!.body ?? null) });
              // An item's error text reaches logs and the instance's fault: as a single create's does, never a secret.
              return item.ok ? item : { ok: false, error: { ...item.error, message: redact(item.error.message, secrets) } };
            }),
          };
        },
        bs.map((b) => b["instance-token"]),
        { count: bs.length },
      );
    },

    /**
     * The largest batch create the shim takes (0: none, a v1 shim), from its capabilities,
     * asked once per provider URL per isolate and remembered (shim-capability-memo.ts).
     */
    batchCreateMax(): Promise<number> {
      return rememberedBatchMax(`${target.name}\n${base}`, async () => {
        const caps = await capabilities();
        return caps.ok ? { known: true, max: caps.value.batch_create?.max ?? 0 } : { known: false, max: 0 };
      });
    },

    getInstance(providerIdOrName: string): Promise<ShimResult<ValidProviderInstance>> {
      const op = "get_instance";
      return send(op, "GET", instancePath(providerIdOrName), undefined, providerIdOrName, (a) => {
        if (a.status === 200) return instanceBody(op, a);
        if (a.status >= 200 && a.status < 300) return fail("malformed", `${op}: unexpected status ${a.status}`, a.status);
        return httpFailure(op, a);
      });
    },

    deleteInstance(providerIdOrName: string): Promise<ShimResult<MachineDeleted>> {
      const op = "delete_instance";
      return send(op, "DELETE", instancePath(providerIdOrName), undefined, providerIdOrName, (a) => {
        if (a.status === 202) return accepted(op, a);
        // Already gone is what a delete wants.
        if (a.status === 200 || a.status === 204 || a.status === 404) return { ok: true, value: { state: "done" } };
        if (a.status >= 200 && a.status < 300) return fail("malformed", `${op}: unexpected status ${a.status}`, a.status);
        return httpFailure(op, a);
      });
    },

    listInstances(): Promise<ShimResult<ValidProviderInstance[]>> {
      const op = "list_instances";
      return send(op, "GET", "/v1/instances", undefined, undefined, (a) => {
        if (a.status !== 200) {
          if (a.status >= 200 && a.status < 300) return fail("malformed", `${op}: unexpected status ${a.status}`, a.status);
          return httpFailure(op, a);
        }
        const parsed = parseJson(a.text);
        if (!parsed.ok) return fail("malformed", `${op}: shim answered 200 with a body that is not JSON`, a.status);
        // One bad entry spoils the list: acting on part of it could mistake a machine for gone or for an orphan.
        const valid = validateProviderInstanceList(parsed.value);
        if (!valid.ok) return fail("malformed", `${op}: invalid ProviderInstance list: ${valid.problems.slice(0, 5).join("; ")}`, a.status);
        return { ok: true, value: valid.value };
      });
    },

    startInstance(id: string): Promise<ShimResult<void>> {
      return powerCall("start_instance", id, "start");
    },

    stopInstance(id: string): Promise<ShimResult<void>> {
      return powerCall("stop_instance", id, "stop");
    },

    removeAllInstances(): Promise<ShimResult<void>> {
      const op = "remove_all_instances";
      return send(op, "DELETE", "/v1/instances", undefined, undefined, (a) =>
        a.status === 200 || a.status === 202 || a.status === 204 ? { ok: true, value: undefined } : httpFailure(op, a),
      );
    },

    /** `GET /v1/capabilities`: what the shim supports (interface version, async operations, batch create, flavors). */
    capabilities,

    /** `GET /v1/flavors` (v1.2): the pool's flavor catalogue. One invalid flavor spoils the answer. */
    flavors(): Promise<ShimResult<FlavorCatalogue>> {
      const op = "flavors";
      return send(op, "GET", "/v1/flavors", undefined, undefined, (a) => {
        if (a.status !== 200) return httpFailure(op, a);
        const parsed = parseJson(a.text);
        if (!parsed.ok) return fail("malformed", `${op}: shim answered 200 with a body that is not JSON`, a.status);
        const catalogue = validateFlavorCatalogue(parsed.value);
        if (!catalogue.ok)
          return fail("malformed", `${op}: invalid flavor catalogue: ${catalogue.problems.slice(0, 5).join("; ")}`, a.status);
        return { ok: true, value: catalogue.value };
      });
    },
  };

  function capabilities(): Promise<ShimResult<ShimCapabilities>> {
    const op = "capabilities";
    return send(op, "GET", "/v1/capabilities", undefined, undefined, (a) => {
      if (a.status !== 200) return httpFailure(op, a);
      const parsed = parseJson(a.text);
      const caps = parsed.ok ? ShimCapabilities.safeParse(parsed.value) : null;
      if (!caps?.success) return fail("malformed", `${op}: expected {interface_version, async, batch_create?: {max}}`, a.status);
      return { ok: true, value: caps.data };
    });
  }

  function powerCall(op: string, id: string, verb: "start" | "stop"): Promise<ShimResult<void>> {
    return send(op, "POST", `${instancePath(id)}/${verb}`, undefined, id, (a) =>
      a.status === 200 || a.status === 204 ? { ok: true, value: undefined } : httpFailure(op, a),
    );
  }
}

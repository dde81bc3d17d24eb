/**
 * How the CLI fails, and the exit code each failure gets, so scripts can tell them apart:
 * 2 the command line or configuration is wrong (nothing was sent), 1 the API answered with an
 * error (its `{error, code, details}` is printed), 3 the coordinator could not be reached, 4 the
 * command ran but found something broken (`doctor`: a check failed).
 */
export const EXIT = { ok: 0, api: 1, usage: 2, network: 3, checks: 4 } as const;

/** A wrong command line, or no URL/token configured: printed with a hint, exit 2. */
export class UsageError extends Error {
  override name = "UsageError";
  readonly hint: string | undefined;
  constructor(message: string, hint?: string) {
    super(message);
    this.hint = hint;
  }
}

/** The API's error body (see src/http/errors.ts): what every non-2xx answer carries. */
export interface ApiErrorBody {
  error: string;
  code?: string;
  details?: unknown;
  request_id?: string;
}

/** The API answered with an error status: exit 1. */
export class ApiFailure extends Error {
  override name = "ApiFailure";
  readonly status: number;
  readonly body: ApiErrorBody;
  constructor(status: number, body: ApiErrorBody) {
    super(body.error);
    this.status = status;
    this.body = body;
  }
}

/** The request never got an HTTP answer (refused, DNS, TLS): exit 3. */
export class NetworkFailure extends Error {
  override name = "NetworkFailure";
  readonly url: string;
  constructor(url: string, cause: unknown) {
    super(cause instanceof Error ? (cause.cause instanceof Error ? cause.cause.message : cause.message) : String(cause));
    this.url = url;
  }
}

/**
 * A step of `edgerunner setup` failed (a wrangler command, most often): what failed, the tool's
 * own words, and what to do next. Exit 1, like an API refusal: an outside system said no.
 */
export class StepFailure extends Error {
  override name = "StepFailure";
  readonly output: string;
  readonly hint: string;
  constructor(message: string, output: string, hint: string) {
    super(message);
    this.output = output;
    this.hint = hint;
  }
}

/** Reads whatever an error response carried as the API's error body (a proxy's HTML page included). */
export function toErrorBody(status: number, body: unknown, text?: string): ApiErrorBody {
  if (body && typeof body === "object" && typeof (body as ApiErrorBody).error === "string") return body as ApiErrorBody;
  const snippet = (text ?? "").trim().slice(0, 200);
  return { error: snippet ? `HTTP ${status}: ${snippet}` : `HTTP ${status}` };
}

/** The lines printed on stderr for a failure (the details as indented JSON, as the API sent them). */
export function describeFailure(err: unknown): { lines: string[]; exit: number } {
  if (err instanceof UsageError) {
    return { lines: [`edgerunner: ${err.message}`, ...(err.hint ? [err.hint] : [])], exit: EXIT.usage };
  }
  if (err instanceof ApiFailure) {
    const { error, code, details, request_id } = err.body;
    const lines = [`edgerunner: ${error} (HTTP ${err.status}${code ? `, ${code}` : ""})`];
    if (details != null)
      lines.push(
        ...JSON.stringify(details, null, 2)
          .split("\n")
          .map((l) => `  ${l}`),
      );
    if (request_id) lines.push(`  request id: ${request_id}`);
    return { lines, exit: EXIT.api };
  }
  if (err instanceof StepFailure) {
    const output = err.output.trimEnd().split("\n").slice(-40);
    return {
      lines: [`edgerunner: ${err.message}`, ...(output.length && output[0] ? output.map((l) => `  ${l}`) : []), err.hint],
      exit: EXIT.api,
    };
  }
  if (err instanceof NetworkFailure) {
    return { lines: [`edgerunner: cannot reach ${err.url}: ${err.message}`], exit: EXIT.network };
  }
  throw err;
}

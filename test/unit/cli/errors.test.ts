import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Context } from "../../../cli/src/command.ts";
import { ApiFailure, describeFailure, EXIT, NetworkFailure, toErrorBody, UsageError } from "../../../cli/src/errors.ts";
import { checkOneStdinSecret, readSecret } from "../../../cli/src/secrets.ts";

describe("describeFailure", () => {
  it("prints the API's error, code, details and request id; exit 1", () => {
    const err = new ApiFailure(400, {
      error: "invalid request body",
      code: "invalid_body",
      details: { url: ["Invalid URL"] },
      request_id: "r-1",
    });
    expect(describeFailure(err)).toEqual({
      exit: EXIT.api,
      lines: [
        "edgerunner: invalid request body (HTTP 400, invalid_body)",
        "  {",
        '    "url": [',
        '      "Invalid URL"',
        "    ]",
        "  }",
        "  request id: r-1",
      ],
    });
  });

  it("usage errors exit 2 with their hint; network failures exit 3; the three codes differ", () => {
    expect(describeFailure(new UsageError("no API token configured", "set EDGERUNNER_TOKEN"))).toEqual({
      exit: 2,
      lines: ["edgerunner: no API token configured", "set EDGERUNNER_TOKEN"],
    });
    const net = new NetworkFailure(
      "http://127.0.0.1:9",
      new TypeError("fetch failed", { cause: new Error("connect ECONNREFUSED 127.0.0.1:9") }),
    );
    expect(describeFailure(net)).toEqual({
      exit: 3,
      lines: ["edgerunner: cannot reach http://127.0.0.1:9: connect ECONNREFUSED 127.0.0.1:9"],
    });
    expect(new Set([EXIT.ok, EXIT.api, EXIT.usage, EXIT.network]).size).toBe(4);
  });

  it("a bug is not dressed up as an API error", () => {
    expect(() => describeFailure(new RangeError("boom"))).toThrow("boom");
  });
});

describe("toErrorBody", () => {
  it("keeps the API's body; turns anything else (a proxy's page) into a short message", () => {
    expect(toErrorBody(404, { error: "not found", code: "not_found" })).toEqual({ error: "not found", code: "not_found" });
    expect(toErrorBody(502, "<html>Bad gateway</html>", "<html>Bad gateway</html>")).toEqual({
      error: "HTTP 502: <html>Bad gateway</html>",
    });
    expect(toErrorBody(500, undefined)).toEqual({ error: "HTTP 500" });
  });
});

describe("secrets", () => {
  const ctx = (values: Context["values"], stdin = "") => ({ values, io: { readStdin: async () => stdin } }) as unknown as Context;

  it("reads stdin or a file without the trailing newline", async () => {
    expect(await readSecret(ctx({ "token-from-stdin": true }, "ghp_x\n"), "token", { required: true })).toBe("ghp_x");
    const dir = mkdtempSync(join(tmpdir(), "edgerunner-cli-secret-"));
    try {
      writeFileSync(join(dir, "key.pem"), "-----BEGIN KEY-----\nabc\n-----END KEY-----\n");
      expect(await readSecret(ctx({ "private-key-from-file": join(dir, "key.pem") }), "private-key", { required: true })).toBe(
        "-----BEGIN KEY-----\nabc\n-----END KEY-----",
      );
      await expect(readSecret(ctx({ "token-from-file": join(dir, "missing") }), "token", { required: true })).rejects.toThrow(
        /cannot read .*missing: ENOENT/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("a required secret must be given, and not empty; an optional one may be absent", async () => {
    await expect(readSecret(ctx({}), "token", { required: true })).rejects.toThrow("--token-from-stdin or --token-from-file is required");
    await expect(readSecret(ctx({ "token-from-stdin": true }, "\n"), "token", { required: true })).rejects.toThrow("token is empty");
    expect(await readSecret(ctx({}), "webhook-secret", { required: false })).toBeUndefined();
    await expect(readSecret(ctx({ "token-from-stdin": true, "token-from-file": "/x" }), "token", { required: true })).rejects.toThrow(
      "not both",
    );
  });

  it("only one secret per command from stdin", () => {
    expect(() => checkOneStdinSecret({ "token-from-stdin": true, "webhook-secret-from-stdin": true }, ["token", "webhook-secret"])).toThrow(
      UsageError,
    );
    expect(() =>
      checkOneStdinSecret({ "token-from-stdin": true, "webhook-secret-from-file": "/x" }, ["token", "webhook-secret"]),
    ).not.toThrow();
  });
});

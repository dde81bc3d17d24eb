import { afterEach, describe, expect, it, vi } from "vitest";
import { inRequestScope, logError, logEvent, logger, logThreshold } from "../../src/observability/log";

/** Every console line by the method it went through, parsed. */
function capture() {
  const lines: { method: string; event: Record<string, unknown> }[] = [];
  for (const method of ["log", "debug", "warn", "error"] as const) {
    vi.spyOn(console, method).mockImplementation((text: unknown) => void lines.push({ method, event: JSON.parse(String(text)) }));
  }
  return lines;
}

const saved = process.env.LOG_LEVEL;
afterEach(() => {
  vi.restoreAllMocks();
  if (saved === undefined) delete process.env.LOG_LEVEL;
  else process.env.LOG_LEVEL = saved;
});

const everyLevel = () => {
  logger.debug({ event: "d" });
  logger.info({ event: "i" });
  logger.warn({ event: "w" });
  logger.error({ event: "e", error: "boom" });
};

describe("logger", () => {
  it("writes info and above by default, each level through its console method", () => {
    delete process.env.LOG_LEVEL;
    const lines = capture();
    everyLevel();
    expect(lines).toEqual([
      { method: "log", event: { event: "i" } },
      { method: "warn", event: { event: "w" } },
      { method: "error", event: { event: "e", error: "boom" } },
    ]);
  });

  it("follows LOG_LEVEL, and falls back to info when it is not a level", () => {
    const lines = capture();
    process.env.LOG_LEVEL = "debug";
    everyLevel();
    expect(lines.map((l) => [l.method, l.event.event])).toEqual([
      ["debug", "d"],
      ["log", "i"],
      ["warn", "w"],
      ["error", "e"],
    ]);
    lines.length = 0;
    process.env.LOG_LEVEL = " WARN ";
    everyLevel();
    expect(lines.map((l) => l.event.event)).toEqual(["w", "e"]);
    lines.length = 0;
    process.env.LOG_LEVEL = "error";
    everyLevel();
    expect(lines.map((l) => l.event.event)).toEqual(["e"]);
    process.env.LOG_LEVEL = "verbose";
    expect(logThreshold()).toBe("info");
    process.env.LOG_LEVEL = "constructor";
    expect(logThreshold()).toBe("info");
  });

  it("keeps logEvent at info and logError at error, with the request id added inside a request", () => {
    delete process.env.LOG_LEVEL;
    const lines = capture();
    logEvent({ event: "outside", scale_set: "ss-1" });
    inRequestScope("req-1", () => {
      logEvent({ event: "inside", job_id: 7 });
      logError({ event: "failed", error: "nope" });
      logEvent({ event: "own_id", request_id: "req-0" });
    });
    expect(lines).toEqual([
      { method: "log", event: { event: "outside", scale_set: "ss-1" } },
      { method: "log", event: { event: "inside", job_id: 7, request_id: "req-1" } },
      { method: "error", event: { event: "failed", error: "nope", request_id: "req-1" } },
      { method: "log", event: { event: "own_id", request_id: "req-0" } },
    ]);
  });
});

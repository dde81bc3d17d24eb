import { describe, expect, it } from "vitest";
import { api } from "./helpers";

describe("health", () => {
  it("serves /healthz without a token", async () => {
    const res = await api.get("/healthz", { token: null });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: "ok" });
  });
});

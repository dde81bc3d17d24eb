import { describe, expect, it } from "vitest";
import { nextLink } from "../../src/github/request-url";

const API = "https://ghes.example.com/api/v3";

describe("nextLink", () => {
  it("finds rel=next among GitHub's Link relations", () => {
    const link = `<${API}/orgs/o/actions/runners?per_page=100&page=1>; rel="prev", <${API}/orgs/o/actions/runners?per_page=100&page=3>; rel="next", <${API}/orgs/o/actions/runners?per_page=100&page=9>; rel="last"`;
    expect(nextLink(link, API)).toBe(`${API}/orgs/o/actions/runners?per_page=100&page=3`);
  });

  it("is null on the last page", () => {
    expect(nextLink(`<${API}/x?page=1>; rel="first", <${API}/x?page=2>; rel="prev"`, API)).toBeNull();
    expect(nextLink(null, API)).toBeNull();
  });

  it("never follows a link off the endpoint's API (the token would go with it)", () => {
    expect(nextLink(`<https://evil.example.com/api/v3/x?page=2>; rel="next"`, API)).toBeNull();
    expect(nextLink(`<https://ghes.example.com/api/v30/x?page=2>; rel="next"`, API)).toBeNull();
  });
});

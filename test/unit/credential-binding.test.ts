import { describe, expect, it } from "vitest";
import { isUnderApiUrl } from "../../src/github/credential-binding";
import { isLoopbackHost } from "../../src/lib/loopback-host";

describe("isUnderApiUrl", () => {
  it.each([
    ["https://api.github.com", "https://api.github.com/repos/o/r/hooks?per_page=100"],
    ["https://api.github.com", "https://api.github.com/"],
    ["https://api.github.com", "https://API.github.com:443/app/installations/1/access_tokens"],
    ["https://ghes.example.com/api/v3", "https://ghes.example.com/api/v3/orgs/o/actions/runners"],
    ["https://ghes.example.com/api/v3", "https://ghes.example.com/api/v3"],
    ["https://ghes.example.com/api/v3/", "https://ghes.example.com/api/v3/actions/runner-registration"],
    ["http://127.0.0.1:8080/w/a", "http://127.0.0.1:8080/w/a/repos/o/r"],
  ])("lets %s credentials go to %s", (bound, url) => {
    expect(isUnderApiUrl(bound, url)).toBe(true);
  });

  it.each([
    ["another host", "https://api.github.com", "https://api.github.com.evil.example/repos"],
    ["another scheme", "https://api.github.com", "http://api.github.com/repos"],
    ["another port", "https://ghes.example.com/api/v3", "https://ghes.example.com:8443/api/v3/repos"],
    ["a path beside the base", "https://ghes.example.com/api/v3", "https://ghes.example.com/api/v3x/repos"],
    ["a path outside the base", "https://ghes.example.com/api/v3", "https://ghes.example.com/other"],
    ["dot segments out of the base", "https://ghes.example.com/api/v3", "https://ghes.example.com/api/v3/../../evil"],
    ["encoded dot segments", "http://127.0.0.1:1/w/a", "http://127.0.0.1:1/w/a/%2e%2e/b/repos"],
    ["user info", "https://api.github.com", "https://x@api.github.com/repos"],
    ["a world next door", "http://127.0.0.1:1/w/a", "http://127.0.0.1:1/w/b/repos"],
    ["not a URL", "https://api.github.com", "api.github.com/repos"],
  ])("refuses %s", (_, bound, url) => {
    expect(isUnderApiUrl(bound, url)).toBe(false);
  });
});

describe("isLoopbackHost", () => {
  const host = (url: string) => new URL(url).hostname;
  it.each([
    "http://127.0.0.1",
    "http://127.255.0.9:80",
    "http://127.1",
    "http://localhost:8787",
    "http://LOCALHOST",
    "http://[::1]:9000",
    "http://[0:0:0:0:0:0:0:1]",
  ])("takes %s", (url) => {
    expect(isLoopbackHost(host(url))).toBe(true);
  });
  it.each([
    "http://128.0.0.1",
    "http://10.0.0.1",
    "http://127.0.0.1.example.com",
    "http://localhost.example.com",
    "http://[::2]",
    "http://[::ffff:7f00:1]",
    "http://example.com",
  ])("refuses %s", (url) => {
    expect(isLoopbackHost(host(url))).toBe(false);
  });
});

import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type ConfigFile, configPath, normalizeUrl, parseConfigFile, resolveConfig, writeConfigFile } from "../../../cli/src/config.ts";
import { UsageError } from "../../../cli/src/errors.ts";

const FILE: ConfigFile = {
  current: "dev",
  profiles: {
    dev: { url: "https://dev.example.com", token: "dev-token" },
    prod: { url: "https://prod.example.com/", token: "prod-token" },
  },
};
const resolve = (flags: { url?: string; profile?: string }, env: Record<string, string>, file: ConfigFile | null = FILE) =>
  resolveConfig(flags, env, file ?? undefined, "/cfg.json");

describe("resolveConfig", () => {
  it("uses the file's current profile when nothing else is given", () => {
    expect(resolve({}, {})).toMatchObject({ url: "https://dev.example.com", token: "dev-token", profile: "dev" });
  });

  it("chooses the profile by --profile, then EDGERUNNER_PROFILE, then the file's current", () => {
    expect(resolve({ profile: "prod" }, { EDGERUNNER_PROFILE: "dev" }).url).toBe("https://prod.example.com");
    expect(resolve({}, { EDGERUNNER_PROFILE: "prod" }).url).toBe("https://prod.example.com");
  });

  it("flags override the environment, which overrides the profile", () => {
    const env = { EDGERUNNER_URL: "https://env.example.com", EDGERUNNER_TOKEN: "env-token" };
    expect(resolve({}, env)).toMatchObject({
      url: "https://env.example.com",
      token: "env-token",
      source: { url: "EDGERUNNER_URL", token: "EDGERUNNER_TOKEN" },
    });
    expect(resolve({ url: "https://flag.example.com" }, env)).toMatchObject({
      url: "https://flag.example.com",
      token: "env-token",
      source: { url: "--url" },
    });
    // One from each place.
    expect(resolve({}, { EDGERUNNER_TOKEN: "env-token" })).toMatchObject({ url: "https://dev.example.com", token: "env-token" });
  });

  it("works from the environment alone, without a file", () => {
    expect(resolve({}, { EDGERUNNER_URL: "http://127.0.0.1:8787/", EDGERUNNER_TOKEN: "t" }, null)).toMatchObject({
      url: "http://127.0.0.1:8787",
      profile: "default",
    });
  });

  it("is a usage error without a URL or token, or with a profile that does not exist", () => {
    expect(() => resolve({}, {}, null)).toThrow(/^no coordinator URL configured$/);
    expect(() => resolve({}, { EDGERUNNER_URL: "https://x.example.com" }, null)).toThrow(/^no API token configured$/);
    expect(() => resolve({ profile: "staging" }, {})).toThrow(/no profile "staging" in \/cfg\.json/);
    expect(() => resolve({}, { EDGERUNNER_PROFILE: "staging" })).toThrow(UsageError);
  });
});

describe("an Access service token", () => {
  it("comes from the environment or the profile, and may replace the API token", () => {
    const env = {
      EDGERUNNER_URL: "https://x.example.com",
      EDGERUNNER_ACCESS_CLIENT_ID: "id.access",
      EDGERUNNER_ACCESS_CLIENT_SECRET: "s3cret",
    };
    expect(resolve({}, env, null)).toMatchObject({
      token: undefined,
      access: { clientId: "id.access", clientSecret: "s3cret" },
      source: { token: "none", access: "EDGERUNNER_ACCESS_CLIENT_ID" },
    });
    const file: ConfigFile = {
      profiles: { default: { url: "https://x.example.com", token: "t", access_client_id: "pid", access_client_secret: "ps" } },
    };
    expect(resolve({}, {}, file)).toMatchObject({ token: "t", access: { clientId: "pid", clientSecret: "ps" } });
  });

  it("is a usage error with only half of it", () => {
    expect(() =>
      resolve({}, { EDGERUNNER_URL: "https://x.example.com", EDGERUNNER_TOKEN: "t", EDGERUNNER_ACCESS_CLIENT_ID: "id" }, null),
    ).toThrow("an Access service token needs both its client id and its secret");
  });
});

describe("normalizeUrl", () => {
  it("drops trailing slashes and a pasted /api/v1", () => {
    expect(normalizeUrl("https://x.example.com/api/v1/", "--url")).toBe("https://x.example.com");
    expect(normalizeUrl("https://x.example.com/edge/", "--url")).toBe("https://x.example.com/edge");
  });
  it("refuses what is not an http(s) URL", () => {
    expect(() => normalizeUrl("x.example.com", "--url")).toThrow(UsageError);
    expect(() => normalizeUrl("ftp://x.example.com", "--url")).toThrow(/use an http\(s\) URL/);
  });
});

describe("the profile file", () => {
  let dir: string | undefined;
  afterEach(() => dir && rmSync(dir, { recursive: true, force: true }));

  it("lives in $EDGERUNNER_CONFIG, else $XDG_CONFIG_HOME/edgerunner, else ~/.config/edgerunner", () => {
    expect(configPath({ EDGERUNNER_CONFIG: "/a/b.json", HOME: "/home/u" })).toBe("/a/b.json");
    expect(configPath({ XDG_CONFIG_HOME: "/x", HOME: "/home/u" })).toBe("/x/edgerunner/config.json");
    expect(configPath({ HOME: "/home/u" })).toBe("/home/u/.config/edgerunner/config.json");
  });

  it("is written readable by its owner only, and read back", () => {
    dir = mkdtempSync(join(tmpdir(), "edgerunner-cli-config-"));
    const path = join(dir, "sub", "config.json");
    writeConfigFile(path, FILE);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(parseConfigFile(readFileSync(path, "utf8"), path)).toEqual(FILE);
  });

  it("a broken file is a usage error naming it", () => {
    expect(() => parseConfigFile("{", "/cfg.json")).toThrow(/\/cfg\.json is not valid JSON/);
    expect(() => parseConfigFile('{"profiles": []}', "/cfg.json")).toThrow('/cfg.json has no "profiles" object');
  });
});

import { describe, expect, it } from "vitest";
import { GLOBAL_OPTIONS, helpText, type Parsed, parseCommandLine } from "../../../cli/src/args.ts";
import { COMMANDS } from "../../../cli/src/commands/index.ts";
import { UsageError } from "../../../cli/src/errors.ts";

const parse = (line: string) => parseCommandLine(line.split(" ").filter(Boolean), COMMANDS);
const run = (line: string) => {
  const p = parse(line);
  if (p.kind !== "run") throw new Error(`not a command: ${p.kind}`);
  return p;
};
const usageError = (line: string): UsageError => {
  try {
    parse(line);
  } catch (e) {
    if (e instanceof UsageError) return e;
    throw e;
  }
  throw new Error(`no usage error for "${line}"`);
};

describe("parseCommandLine", () => {
  it("finds the command by its words, with aliases, and global options anywhere", () => {
    expect(run("scaleset list").command.words).toEqual(["scaleset", "list"]);
    expect(run("repos ls").command.words).toEqual(["repo", "list"]);
    expect(run("pools rm abc").command.words).toEqual(["scaleset", "delete"]);
    const p = run("--json --profile prod scaleset show linux");
    expect(p.command.words).toEqual(["scaleset", "show"]);
    expect(p.values).toMatchObject({ json: true, profile: "prod" });
    expect(p.positionals).toEqual(["linux"]);
    expect(run("repo webhook install octo/app --insecure-ssl").values["insecure-ssl"]).toBe(true);
  });

  it("reads the command's options: strings, repeatable lists, negated booleans", () => {
    const p = run("scaleset update linux --labels a,b --labels c --no-jit-config --max-runners 3");
    expect(p.values).toMatchObject({ labels: ["a,b", "c"], "jit-config": false, "max-runners": "3" });
  });

  it("refuses unknown commands, unknown options, and wrong positional counts", () => {
    expect(usageError("frobnicate").message).toBe('unknown command "frobnicate"');
    expect(usageError("scaleset frobnicate").message).toBe('unknown command "scaleset frobnicate"');
    expect(usageError("scaleset show").message).toBe("missing <id|name>");
    expect(usageError("scaleset show a b").message).toBe('unexpected argument "b"');
    expect(usageError("scaleset list --bogus").message).toMatch(/Unknown option '--bogus'/);
    // Only boolean options negate: --no-<string option> is not an option.
    expect(usageError("repo update octo/app --no-enterprise").message).toMatch(/Unknown option '--no-enterprise'/);
    expect(run("repo update octo/app --remove-enterprise --no-use-parent-scale-sets").values).toMatchObject({
      "remove-enterprise": true,
      "use-parent-scale-sets": false,
    });
  });

  it("points a secret given on argv to its file and stdin options", () => {
    const e = usageError("credential create --name x --auth-type pat --token ghp_x");
    expect(e.hint).toBe("secrets are never taken from the command line: use --token-from-stdin or --token-from-file");
    expect(usageError("provider create --secret s").hint).toContain("--secret-from-stdin");
  });

  it("gives help: asked (--help) or as the answer to an incomplete command", () => {
    expect(parse("--help")).toMatchObject({ kind: "help", prefix: [], asked: true });
    expect(parse("")).toMatchObject({ kind: "help", prefix: [], asked: false });
    const group = parse("scaleset") as Extract<Parsed, { kind: "help" }>;
    expect(group).toMatchObject({ kind: "help", prefix: ["scaleset"], asked: false });
    expect(group.commands.map((c) => c.words[1])).toEqual([
      "list",
      "show",
      "create",
      "update",
      "pause",
      "resume",
      "reconcile",
      "reset",
      "spend-reset",
      "delete",
    ]);
    const one = parse("scaleset create -h") as Extract<Parsed, { kind: "help" }>;
    expect(helpText(one)).toMatch(/^usage: edgerunner scaleset create \[options\]\n/);
    expect(helpText(one)).toContain("--max-runners N");
    expect(parse("--version")).toEqual({ kind: "version" });
  });

  it("no command has an option named like a global one (it would be read as both)", () => {
    const clashes = COMMANDS.flatMap((c) =>
      Object.keys(c.options ?? {})
        .filter((o) => o in GLOBAL_OPTIONS)
        .map((o) => `${c.words.join(" ")} --${o}`),
    );
    expect(clashes).toEqual([]);
  });

  it("every resource of the admin API has its commands", () => {
    const names = COMMANDS.map((c) => c.words.join(" "));
    for (const noun of ["endpoint", "credential", "repo", "org", "enterprise", "provider", "scaleset"]) {
      for (const verb of ["list", "show", "create", "update", "delete"]) expect(names).toContain(`${noun} ${verb}`);
    }
    for (const name of [
      "repo webhook install",
      "repo webhook show",
      "repo webhook remove",
      "org webhook install",
      "scaleset pause",
      "scaleset resume",
      "scaleset reconcile",
      "scaleset reset",
      "instance list",
      "instance show",
      "instance delete",
      "job list",
      "login",
      "token create",
      "token list",
      "token revoke",
      "audit list",
    ]) {
      expect(names).toContain(name);
    }
  });
});

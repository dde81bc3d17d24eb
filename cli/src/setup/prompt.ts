/**
 * Asking in a terminal (a cloud key for `setup --shim`, not echoed; the path of a key file,
 * echoed). Without a terminal, or under CI, there is no one to ask: undefined, and the caller
 * says which variable to set, so a pipeline fails at once instead of waiting on a question.
 */

/** CI systems set CI (GitHub Actions, GitLab, Buildkite: `true`); some give a terminal all the same. */
export function canPrompt(isTTY: boolean | undefined, env: NodeJS.ProcessEnv): boolean {
  const ci = env.CI?.trim().toLowerCase();
  return isTTY === true && (!ci || ci === "false" || ci === "0");
}

export function promptInTerminal(question: string, opts: { hidden: boolean }): Promise<string | undefined> {
  const stdin = process.stdin;
  if (!canPrompt(stdin.isTTY, process.env)) return Promise.resolve(undefined);
  process.stderr.write(question);
  return new Promise((resolve) => {
    let value = "";
    const done = (answer: string | undefined) => {
      stdin.setRawMode(false);
      stdin.pause();
      stdin.off("data", onData);
      process.stderr.write("\n");
      resolve(answer);
    };
    const onData = (chunk: string) => {
      for (const c of chunk) {
        if (c === "\r" || c === "\n") return done(value);
        // Ctrl-C or Ctrl-D: no answer (the caller stops with what to set instead).
        if (c === "\u0003" || c === "\u0004") return done(undefined);
        const erase = c === "\u007f" || c === "\b";
        if (!opts.hidden && (!erase || value)) process.stderr.write(erase ? "\b \b" : c);
        value = erase ? value.slice(0, -1) : value + c;
      }
    };
    // Raw mode for both: the terminal echoes nothing itself, so a hidden answer stays hidden.
    stdin.setRawMode(true);
    stdin.setEncoding("utf8");
    stdin.resume();
    stdin.on("data", onData);
  });
}

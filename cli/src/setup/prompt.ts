/**
 * Asking for a secret in a terminal without echoing it (AWS keys for `setup --shim aws-ec2`).
 * Without a terminal there is no one to ask: undefined, and the caller says which variable to set.
 */

export function promptHidden(question: string): Promise<string | undefined> {
  const stdin = process.stdin;
  if (!stdin.isTTY) return Promise.resolve(undefined);
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
        value = c === "\u007f" || c === "\b" ? value.slice(0, -1) : value + c;
      }
    };
    stdin.setRawMode(true);
    stdin.setEncoding("utf8");
    stdin.resume();
    stdin.on("data", onData);
  });
}

import type { Io } from "../../../cli/src/command.ts";
import { main } from "../../../cli/src/main.ts";

/** A JSON answer of the fake API. */
export const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } });

/**
 * main() with captured output and a fake API (no server): what a command sends and prints.
 * `answer` plays the API (a body: every request answered 200 with it); each request is kept
 * (a clone, so a test can still read its body).
 */
export async function runCli(
  argv: string[],
  answer: ((req: Request) => Response | Promise<Response>) | { body: unknown },
  opts: { env?: Record<string, string>; stdin?: string } = {},
) {
  const out: string[] = [];
  const err: string[] = [];
  const requests: Request[] = [];
  const io: Io = {
    stdout: (t) => void out.push(t),
    stderr: (t) => void err.push(t),
    readStdin: async () => opts.stdin ?? "",
    env: { EDGERUNNER_URL: "https://er.example.com", EDGERUNNER_TOKEN: "t0k", EDGERUNNER_CONFIG: "/nonexistent/config.json", ...opts.env },
    fetch: async (input, init) => {
      const req = new Request(input, init);
      requests.push(req.clone());
      return typeof answer === "function" ? answer(req) : json(200, answer.body);
    },
  };
  const code = await main(argv, io);
  return { code, stdout: out.join(""), stderr: err.join(""), requests };
}

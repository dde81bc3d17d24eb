import { z } from "zod";
import { isUnderApiUrl } from "../credential-binding";
import { GithubApiError, GithubUnavailableError } from "../errors";
import { GITHUB_API_VERSION, USER_AGENT } from "../github-client";
import { createAppJwt, importAppKey } from "./app-auth";

/**
 * The GitHub calls of the first-run page, made before any credentials exist: exchanging a
 * manifest's code for the new App (no authentication: the code is the proof), and, as the App
 * itself (a JWT signed with its key), reading its installations and their repositories. An App
 * of ours is sent only to the API URL it was created on (as credentials are,
 * github/credential-binding.ts).
 */

/** What `POST /app-manifests/{code}/conversions` answers (201), the parts we keep. */
export const ManifestConversion = z.object({
  id: z.int().positive(),
  slug: z.string().min(1).max(100),
  name: z.string().min(1).max(200),
  owner: z.object({ login: z.string().min(1).max(100) }).nullable(),
  html_url: z.url(),
  client_id: z.string().min(1).max(200),
  client_secret: z.string().min(1).max(1024),
  // GitHub's description says it may be null (an App registered without an active webhook).
  webhook_secret: z.string().max(512).nullable(),
  pem: z
    .string()
    .min(1)
    .max(16 * 1024),
  permissions: z.record(z.string(), z.string()),
  events: z.array(z.string()),
});
export type ManifestConversion = z.infer<typeof ManifestConversion>;

const Installation = z.object({
  id: z.int().positive(),
  app_id: z.int().positive(),
  account: z.object({ login: z.string().min(1).max(100), type: z.enum(["User", "Organization", "Enterprise"]) }).nullable(),
  repository_selection: z.enum(["all", "selected"]),
  suspended_at: z.string().nullable().optional(),
});
export type GithubInstallation = z.infer<typeof Installation>;

const TIMEOUT_MS = 15_000;
/** An installation's repositories are read at most this many pages of 100. */
const MAX_REPOSITORY_PAGES = 10;

const headers = (authorization?: string): Record<string, string> => ({
  accept: "application/vnd.github+json",
  "x-github-api-version": GITHUB_API_VERSION,
  "user-agent": USER_AGENT,
  ...(authorization && { authorization }),
});

async function send(operation: string, url: string, init: RequestInit, fetchFn: typeof fetch): Promise<Response> {
  try {
    return await fetchFn(url, { ...init, signal: AbortSignal.timeout(TIMEOUT_MS) });
  } catch (err) {
    throw new GithubUnavailableError(operation, null, 1, err instanceof Error ? err.message : String(err));
  }
}

async function failure(operation: string, res: Response): Promise<GithubApiError> {
  let message = res.statusText;
  try {
    const body = (await res.json()) as { message?: unknown };
    if (typeof body.message === "string") message = body.message.slice(0, 300);
  } catch {
    // not JSON: the status text says enough
  }
  return new GithubApiError(operation, res.status, message);
}

/** The code GitHub's redirect brought back, exchanged once for the App and its secrets. */
export async function exchangeManifestCode(apiBaseUrl: string, code: string, fetchFn: typeof fetch = fetch): Promise<ManifestConversion> {
  const operation = "apps/create-from-manifest";
  const url = `${apiBaseUrl.replace(/\/+$/, "")}/app-manifests/${encodeURIComponent(code)}/conversions`;
  const res = await send(operation, url, { method: "POST", headers: headers() }, fetchFn);
  if (res.status !== 201) throw await failure(operation, res);
  const parsed = ManifestConversion.safeParse(await res.json());
  if (!parsed.success) throw new GithubApiError(operation, res.status, "the answer is not a GitHub App registration");
  return parsed.data;
}

/** One of our Apps acting as itself. */
export class AppSession {
  private jwt: { token: string; until: number } | null = null;

  constructor(
    private readonly app: { appId: number; boundApiUrl: string; privateKey: string },
    private readonly fetchFn: typeof fetch = fetch,
  ) {}

  private url(path: string): string {
    const url = `${this.app.boundApiUrl}${path}`;
    if (!isUnderApiUrl(this.app.boundApiUrl, url)) throw new Error(`refusing to send the App's key outside ${this.app.boundApiUrl}`);
    return url;
  }

  private async authorization(): Promise<string> {
    const now = Date.now();
    if (!this.jwt || this.jwt.until < now) {
      const token = await createAppJwt({ appId: this.app.appId, key: await importAppKey(this.app.privateKey), now });
      this.jwt = { token, until: now + 5 * 60_000 };
    }
    return `Bearer ${this.jwt.token}`;
  }

  private async json(operation: string, method: string, path: string, authorization: string, body?: unknown): Promise<unknown> {
    const res = await send(
      operation,
      this.url(path),
      {
        method,
        headers: { ...headers(authorization), ...(body !== undefined && { "content-type": "application/json" }) },
        ...(body !== undefined && { body: JSON.stringify(body) }),
      },
      this.fetchFn,
    );
    if (res.status < 200 || res.status > 299) throw await failure(operation, res);
    return res.json();
  }

  /** `GET /app/installations/{id}`: the installation, only when it is this App's. */
  async installation(id: number): Promise<GithubInstallation> {
    const data = await this.json("apps/get-installation", "GET", `/app/installations/${id}`, await this.authorization());
    return Installation.parse(data);
  }

  /** `GET /app/installations`: every installation of the App (first 100). */
  async installations(): Promise<GithubInstallation[]> {
    const data = await this.json("apps/list-installations", "GET", "/app/installations?per_page=100", await this.authorization());
    return z.array(Installation).parse(data);
  }

  /** The repositories an installation covers (`owner/name`), through a short-lived installation token. */
  async installationRepositories(id: number): Promise<string[]> {
    const minted = z
      .object({ token: z.string().min(1) })
      .parse(
        await this.json(
          "apps/create-installation-access-token",
          "POST",
          `/app/installations/${id}/access_tokens`,
          await this.authorization(),
        ),
      );
    const names: string[] = [];
    for (let page = 1; page <= MAX_REPOSITORY_PAGES; page++) {
      const data = z
        .object({ total_count: z.int(), repositories: z.array(z.object({ full_name: z.string() })) })
        .parse(
          await this.json(
            "apps/list-repos-accessible-to-installation",
            "GET",
            `/installation/repositories?per_page=100&page=${page}`,
            `Bearer ${minted.token}`,
          ),
        );
      names.push(...data.repositories.map((r) => r.full_name));
      if (names.length >= data.total_count || data.repositories.length < 100) break;
    }
    return names;
  }

  /** `PATCH /app/hook/config`: gives the App's webhook a secret (when GitHub made it without one). */
  async setWebhookSecret(secret: string): Promise<void> {
    await this.json("apps/update-webhook-config-for-app", "PATCH", "/app/hook/config", await this.authorization(), { secret });
  }
}

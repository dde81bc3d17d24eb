/**
 * Checking a GitHub App manifest the way GitHub does before it shows "Create GitHub App"
 * (docs: "Registering a GitHub App from a manifest", "Registering a GitHub App"): `url` is
 * required; the webhook, when active (the default), needs its `url`; every URL is a full
 * http(s) URL; at most 10 callback URLs; permissions are GitHub's names and levels; every
 * default event must be one an App may subscribe and be opened by the permissions ("Default
 * events are not supported by permissions: …", GitHub's own wording). A name is at most 34
 * characters, and its slug is how GitHub shows it: lower case, accents dropped, anything else
 * a single "-". Pure functions over plain data.
 */
import { APP_PERMISSIONS, EVENT_PERMISSIONS, grants, listed } from "./permissions.ts";

export interface Manifest {
  name?: string;
  url: string;
  hook_attributes?: { url?: string; active?: boolean };
  redirect_url?: string;
  callback_urls?: string[];
  setup_url?: string;
  description?: string;
  public?: boolean;
  default_events?: string[];
  default_permissions?: Record<string, string>;
  request_oauth_on_install?: boolean;
  setup_on_update?: boolean;
}

export type ManifestCheck = { ok: true; manifest: Manifest } | { ok: false; problems: string[] };

export const MAX_NAME_LENGTH = 34;
const MAX_CALLBACK_URLS = 10;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

function isHttpUrl(v: unknown): boolean {
  if (typeof v !== "string") return false;
  try {
    const u = new URL(v);
    return u.protocol === "http:" || u.protocol === "https:";
  } catch {
    return false;
  }
}

/** The slug GitHub derives from an App's name ("My APp Näme" → "my-app-name"). */
export function slugOf(name: string): string {
  return name
    .normalize("NFKD")
    .replace(/\p{M}/gu, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "");
}

/** Problems with a name an App would get, given the slugs and account logins already taken (lower case). */
export function nameProblems(name: string, taken: { slugs: string[]; accounts: string[]; owner: string }): string[] {
  const trimmed = name.trim();
  if (!trimmed) return ["Name can't be blank"];
  if (trimmed.length > MAX_NAME_LENGTH) return [`Name is too long (maximum is ${MAX_NAME_LENGTH} characters)`];
  const slug = slugOf(trimmed);
  if (!slug) return ["Name must contain letters or digits"];
  if (taken.slugs.includes(slug)) return ["Name is already in use"];
  if (slug !== taken.owner && taken.accounts.includes(slug)) return ["Name is already in use by an account"];
  return [];
}

function urlProblems(m: Record<string, unknown>): string[] {
  const out: string[] = [];
  if (m.url === undefined || m.url === "") out.push("Homepage URL (url) can't be blank");
  else if (!isHttpUrl(m.url)) out.push("Homepage URL (url) must be a full http(s) URL");
  for (const key of ["redirect_url", "setup_url"] as const) {
    if (m[key] !== undefined && !isHttpUrl(m[key])) out.push(`${key} must be a full http(s) URL`);
  }
  if (m.callback_urls !== undefined) {
    if (!Array.isArray(m.callback_urls) || !m.callback_urls.every(isHttpUrl)) out.push("callback_urls must be full http(s) URLs");
    else if (m.callback_urls.length > MAX_CALLBACK_URLS) out.push(`callback_urls: at most ${MAX_CALLBACK_URLS} callback URLs`);
  }
  const hook = m.hook_attributes;
  if (hook !== undefined) {
    if (!isObject(hook)) out.push("hook_attributes must be an object");
    else {
      if (hook.active !== undefined && typeof hook.active !== "boolean") out.push("hook_attributes.active must be true or false");
      const active = hook.active !== false;
      if (active && (hook.url === undefined || hook.url === "")) out.push("Webhook URL (hook_attributes.url) can't be blank");
      else if (hook.url !== undefined && !isHttpUrl(hook.url)) out.push("Webhook URL (hook_attributes.url) must be a full http(s) URL");
    }
  }
  return out;
}

function permissionProblems(m: Record<string, unknown>): string[] {
  const perms = m.default_permissions;
  if (perms === undefined) return [];
  if (!isObject(perms)) return ["default_permissions must be an object of permission name to access level"];
  const out: string[] = [];
  for (const [name, level] of Object.entries(perms)) {
    const levels = APP_PERMISSIONS[name];
    if (!levels) out.push(`Default permission ${name} does not exist`);
    else if (typeof level !== "string" || !levels.includes(level))
      out.push(`Default permission ${name} must be ${listed(levels, "disjunction")}`);
  }
  return out;
}

function eventProblems(m: Record<string, unknown>): string[] {
  const events = m.default_events;
  if (events === undefined) return [];
  if (!Array.isArray(events) || !events.every((e) => typeof e === "string")) return ["default_events must be a list of event names"];
  const perms = isObject(m.default_permissions) ? (m.default_permissions as Record<string, string>) : {};
  const unknown = events.filter((e) => !(e in EVENT_PERMISSIONS));
  const unopened = events.filter((e) => !grants(perms, EVENT_PERMISSIONS[e] ?? "", "read"));
  const out: string[] = [];
  if (unknown.length) out.push(`Default events unsupported: ${listed(unknown)}`);
  if (unopened.length) out.push(`Default events are not supported by permissions: ${listed(unopened)}`);
  return out;
}

/** Checks the `manifest` form field (a JSON string). */
export function checkManifest(raw: string | null): ManifestCheck {
  if (raw === null || raw.trim() === "") return { ok: false, problems: ["The manifest parameter is missing"] };
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return { ok: false, problems: ["The manifest is not valid JSON"] };
  }
  if (!isObject(parsed)) return { ok: false, problems: ["The manifest must be a JSON object"] };
  const problems = [...urlProblems(parsed), ...permissionProblems(parsed), ...eventProblems(parsed)];
  if (parsed.name !== undefined && typeof parsed.name !== "string") problems.push("name must be a string");
  else if (typeof parsed.name === "string" && parsed.name.trim().length > MAX_NAME_LENGTH)
    problems.push(`Name is too long (maximum is ${MAX_NAME_LENGTH} characters)`);
  if (parsed.description !== undefined && typeof parsed.description !== "string") problems.push("description must be a string");
  for (const key of ["public", "request_oauth_on_install", "setup_on_update"] as const) {
    if (parsed[key] !== undefined && typeof parsed[key] !== "boolean") problems.push(`${key} must be true or false`);
  }
  return problems.length ? { ok: false, problems } : { ok: true, manifest: parsed as unknown as Manifest };
}

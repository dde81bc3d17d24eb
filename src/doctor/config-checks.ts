import { isLoopbackHost } from "../lib/loopback-host";
import { webhookUrlFor } from "../lib/webhook-url";
import type { ConfigFacts } from "./facts";
import { probeProblem } from "./probe-text";
import { check, type DoctorCheck } from "./report";

/**
 * The coordinator's own configuration: PUBLIC_URL, the secrets it cannot work without, the
 * optional ones, and Cloudflare Access. Each rule says which variable to set and how.
 */

/** Secrets shorter than this are guessable enough to warn about. */
export const MIN_SECRET_LENGTH = 16;

const PUT = (name: string, how = "a long random value, e.g. `openssl rand -hex 32`") =>
  `npx wrangler secret put ${name} (${how}), then deploy again`;

/** PUBLIC_URL parsed, or why it cannot be used. */
export function parsePublicUrl(raw: string | null): { ok: true; url: URL } | { ok: false; why: string } {
  if (raw === null) return { ok: false, why: "PUBLIC_URL is not set" };
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, why: `PUBLIC_URL "${raw}" is not a URL` };
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return { ok: false, why: `PUBLIC_URL must be http(s), not ${url.protocol}` };
  return { ok: true, url };
}

/** Where GitHub must deliver this coordinator's webhooks, or null when PUBLIC_URL is not usable. */
export function webhookUrlOf(publicUrl: string | null): string | null {
  const parsed = parsePublicUrl(publicUrl);
  return parsed.ok ? webhookUrlFor(publicUrl!) : null;
}

const SET_PUBLIC_URL =
  "Deploy with npx edgerunner setup: it sets PUBLIC_URL to the workers.dev address it deployed to (or give --public-url " +
  "https://your.route for a route of your own); by hand, set PUBLIC_URL under [vars] in the deploy config and deploy again";

export function publicUrlCheck(c: ConfigFacts): DoctorCheck {
  const id = "config.public_url";
  const subject = "PUBLIC_URL";
  const parsed = parsePublicUrl(c.publicUrl);
  if (!parsed.ok) {
    return check(id, subject, "fail", `${parsed.why}: GitHub cannot be told where to deliver webhooks, nor machines where to call back.`, {
      fix: SET_PUBLIC_URL,
    });
  }
  const { url } = parsed;
  const details = { public_url: c.publicUrl, webhook_url: webhookUrlOf(c.publicUrl) };
  if (isLoopbackHost(url.hostname)) {
    return check(id, subject, "warn", `${c.publicUrl} is a loopback address: only this machine reaches it (fine for npm run dev).`, {
      fix: `GitHub and runner machines elsewhere cannot reach it. ${SET_PUBLIC_URL}`,
      details,
    });
  }
  if (url.protocol !== "https:") {
    return check(
      id,
      subject,
      "fail",
      `${c.publicUrl} is plain http on a network host: runner tokens would cross the network in the clear.`,
      {
        fix: `Use https://. ${SET_PUBLIC_URL}`,
        details,
      },
    );
  }
  if (url.search || url.hash) {
    return check(id, subject, "warn", `${c.publicUrl} has a query or fragment: the URLs built from it would be wrong.`, {
      fix: "Remove everything after the path from PUBLIC_URL, then deploy again",
      details,
    });
  }
  return check(id, subject, "ok", `${c.publicUrl}; GitHub delivers to ${details.webhook_url}.`, { details });
}

/**
 * A Worker cannot fetch its own hostname (Cloudflare error 1042), so from inside the best
 * evidence is this very request: did it come in at PUBLIC_URL's address? The CLI, running
 * outside, fetches PUBLIC_URL/healthz itself.
 */
export function publicUrlReachableCheck(c: ConfigFacts): DoctorCheck {
  const id = "config.public_url_reachable";
  const subject = "PUBLIC_URL, seen from the coordinator";
  const parsed = parsePublicUrl(c.publicUrl);
  if (!parsed.ok) return check(id, subject, "skip", "PUBLIC_URL is not usable (see above).");
  if (c.requestOrigin === null) return check(id, subject, "skip", "No request to compare PUBLIC_URL with.");
  if (c.requestOrigin === parsed.url.origin) {
    return check(id, subject, "ok", `This request reached the coordinator at ${parsed.url.origin}.`);
  }
  return check(
    id,
    subject,
    "skip",
    `This request came in at ${c.requestOrigin}, not at ${parsed.url.origin}; a Worker cannot fetch its own address ` +
      "(Cloudflare error 1042), so only a request from outside tells whether PUBLIC_URL reaches it: `edgerunner doctor` makes one.",
    { details: { request_origin: c.requestOrigin } },
  );
}

export function adminAuthCheck(c: ConfigFacts): DoctorCheck {
  const id = "config.admin_auth";
  const subject = "ADMIN_TOKEN / Cloudflare Access";
  const accessOn = c.access.teamDomain !== null && c.access.audSet;
  if (!c.adminToken.set && !accessOn) {
    return check(
      id,
      subject,
      "fail",
      "Neither ADMIN_TOKEN nor Cloudflare Access is set: nobody can sign in to the admin API or the dashboard.",
      {
        fix: PUT("ADMIN_TOKEN"),
      },
    );
  }
  if (c.adminToken.set && c.adminToken.length < MIN_SECRET_LENGTH) {
    return check(id, subject, "warn", `ADMIN_TOKEN is only ${c.adminToken.length} characters long: easy to guess.`, {
      fix: PUT("ADMIN_TOKEN"),
    });
  }
  const how = [c.adminToken.set && "ADMIN_TOKEN", accessOn && "Cloudflare Access"].filter(Boolean).join(" and ");
  return check(id, subject, "ok", `Admin sign-in with ${how}.`);
}

const KEY_HOW = '32 random bytes in base64: node -e \'console.log(require("crypto").randomBytes(32).toString("base64"))\'';

export function encryptionKeyCheck(c: ConfigFacts): DoctorCheck {
  const id = "config.encryption_key";
  const subject = "ENCRYPTION_KEY";
  const { encryptionKey: k, previousKeys: prev } = c;
  const fail = (summary: string, fix: string) => check(id, subject, "fail", summary, { fix });
  if (!k.set) return fail("ENCRYPTION_KEY is not set: no secret can be stored or opened.", PUT("ENCRYPTION_KEY", KEY_HOW));
  if (k.bytes === null) return fail("ENCRYPTION_KEY is not base64.", PUT("ENCRYPTION_KEY", KEY_HOW));
  if (k.bytes !== 32) {
    return fail(`ENCRYPTION_KEY decodes to ${k.bytes} bytes, not 32: no secret can be stored or opened.`, PUT("ENCRYPTION_KEY", KEY_HOW));
  }
  if (prev.bad > 0) {
    return fail(
      `${prev.bad} of the ${prev.count} keys in ENCRYPTION_KEYS_PREVIOUS do not decode to 32 bytes: no secret can be opened.`,
      "Fix or remove the bad keys (comma-separated base64) with npx wrangler secret put ENCRYPTION_KEYS_PREVIOUS",
    );
  }
  const rotating = prev.count
    ? ` ${prev.count} previous key(s) still open older secrets (remove them after POST /api/v1/secrets/rotate).`
    : "";
  return check(id, subject, "ok", `A 32-byte key.${rotating}`);
}

export function instanceTokenSecretCheck(c: ConfigFacts): DoctorCheck {
  const id = "config.instance_token_secret";
  const subject = "INSTANCE_TOKEN_SECRET";
  const s = c.instanceTokenSecret;
  if (!s.set) {
    return check(id, subject, "fail", "INSTANCE_TOKEN_SECRET is not set: runner machines cannot be given tokens to call back with.", {
      fix: PUT("INSTANCE_TOKEN_SECRET"),
    });
  }
  if (s.length < MIN_SECRET_LENGTH) {
    return check(id, subject, "warn", `INSTANCE_TOKEN_SECRET is only ${s.length} characters long: easy to guess.`, {
      fix: PUT("INSTANCE_TOKEN_SECRET"),
    });
  }
  return check(id, subject, "ok", "Set.");
}

export function metricsTokenCheck(c: ConfigFacts): DoctorCheck {
  const id = "config.metrics_token";
  const subject = "METRICS_TOKEN";
  if (c.metricsToken) return check(id, subject, "ok", "Set: Prometheus scrapes /metrics with it.");
  return check(id, subject, "warn", "Not set: GET /metrics takes only named API tokens.", {
    fix: `${PUT("METRICS_TOKEN")}; or give the scraper a read token: edgerunner token create --name prometheus --scope read`,
  });
}

export function accessCheck(c: ConfigFacts): DoctorCheck {
  const id = "config.access";
  const subject = "Cloudflare Access";
  const a = c.access;
  if (!a.teamDomainSet && !a.audSet) return check(id, subject, "ok", "Off: the admin API takes ADMIN_TOKEN and named API tokens.");
  if (a.teamDomainSet !== a.audSet) {
    const [set, missing] = a.teamDomainSet ? ["ACCESS_TEAM_DOMAIN", "ACCESS_AUD"] : ["ACCESS_AUD", "ACCESS_TEAM_DOMAIN"];
    return check(id, subject, "fail", `${set} is set without ${missing}: Access sign-in stays off.`, {
      fix: `Set ${missing} under [vars] in wrangler.toml as well (docs/operations.md, "Signing in with Cloudflare Access"), or remove ${set}`,
    });
  }
  if (a.teamDomain === null) {
    return check(id, subject, "fail", "ACCESS_TEAM_DOMAIN is not a domain: Access sign-in stays off.", {
      fix: "Set ACCESS_TEAM_DOMAIN to your team's name (`myteam` or `myteam.cloudflareaccess.com`)",
    });
  }
  const details = { team_domain: a.teamDomain, certs_url: a.certsUrl };
  const certs = a.certs;
  if (certs && !certs.ok) {
    return check(
      id,
      subject,
      "fail",
      `The team's signing keys at ${a.certsUrl} ${probeProblem(certs.error)}: every Access sign-in is refused (503).`,
      {
        fix: "Check ACCESS_TEAM_DOMAIN (the team name in the Zero Trust dashboard) and ACCESS_CERTS_URL, if set",
        details,
      },
    );
  }
  if (certs?.ok && certs.value.keys === 0) {
    return check(id, subject, "fail", `The team's key set at ${a.certsUrl} holds no keys: no Access JWT can verify.`, {
      fix: "Check ACCESS_TEAM_DOMAIN and ACCESS_CERTS_URL",
      details,
    });
  }
  const keys = certs?.ok ? `, ${certs.value.keys} signing key(s)` : "";
  return check(id, subject, "ok", `On: team ${a.teamDomain}${keys}.`, { details });
}

export function configChecks(c: ConfigFacts): DoctorCheck[] {
  return [
    publicUrlCheck(c),
    publicUrlReachableCheck(c),
    adminAuthCheck(c),
    encryptionKeyCheck(c),
    instanceTokenSecretCheck(c),
    metricsTokenCheck(c),
    accessCheck(c),
  ];
}

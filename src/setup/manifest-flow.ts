import { toBase64Url } from "../crypto/base64url";
import { keyringFor } from "../crypto/keyring";
import { seal } from "../crypto/secret-box";
import { secretContext } from "../crypto/secret-contexts";
import { sha256Hex } from "../crypto/sha256";
import { createDb } from "../db/client";
import {
  claimManifestState,
  findApp,
  findManifestState,
  type GithubAppRow,
  insertAppFromManifest,
  insertManifestState,
  pruneManifestStates,
  releaseManifestState,
} from "../db/github/github-app-store";
import { findEndpoint } from "../db/github/github-endpoint-store";
import type { Env } from "../env";
import { AppSession, exchangeManifestCode } from "../github/app/app-registration";
import { GithubApiError } from "../github/errors";
import { errorText, logError, logEvent } from "../observability/log";
import { type AppFeatures, type AppOwner, buildAppManifest, manifestPostUrl } from "./app-manifest";

/**
 * GitHub's App manifest flow, as the first-run page runs it. Start: a fresh `state`, stored
 * (hashed) with the dashboard session that asked, and the form the browser posts to GitHub.
 * Complete: GitHub's redirect brings a one-time `code` and our `state` back; the state must be
 * this session's, unexpired and unused, and the code is exchanged for the App, whose secrets are
 * sealed in the same write that spends the state. A second arrival of the same redirect (a
 * reload) finds the App already made.
 */

type SetupEnv = Pick<Env, "DB" | "ENCRYPTION_KEY" | "ENCRYPTION_KEYS_PREVIOUS" | "PUBLIC_URL">;

/** How long a round trip may take: GitHub's code itself expires after an hour. */
export const MANIFEST_TTL_MS = 60 * 60_000;

export const sessionHash = (sessionNonce: string): Promise<string> => sha256Hex(`edgerunner/app-manifest-session/${sessionNonce}`);

export class SetupError extends Error {
  constructor(
    readonly status: 400 | 403 | 404 | 409 | 410 | 502,
    message: string,
  ) {
    super(message);
  }
}

export interface StartedManifest {
  postUrl: string;
  manifest: string;
}

export async function startManifest(
  env: SetupEnv,
  input: { sessionNonce: string; endpointName: string; owner: AppOwner; name: string; features: AppFeatures },
  now = Date.now(),
): Promise<StartedManifest> {
  const db = createDb(env);
  const endpoint = await findEndpoint(db, input.endpointName);
  if (!endpoint) throw new SetupError(404, `unknown GitHub endpoint '${input.endpointName}'`);
  const manifest = buildAppManifest({ publicUrl: env.PUBLIC_URL, name: input.name, features: input.features });
  const state = toBase64Url(crypto.getRandomValues(new Uint8Array(24)));
  await pruneManifestStates(db, now - 24 * 60 * 60_000);
  await insertManifestState(db, {
    stateHash: await sha256Hex(state),
    sessionHash: await sessionHash(input.sessionNonce),
    endpointName: endpoint.name,
    manifest: JSON.stringify(manifest),
    createdAt: now,
    expiresAt: now + MANIFEST_TTL_MS,
  });
  logEvent({
    event: "github_app_manifest_started",
    endpoint: endpoint.name,
    owner: input.owner.kind === "user" ? "user" : input.owner.login,
  });
  return { postUrl: manifestPostUrl(endpoint.baseUrl, input.owner, state), manifest: JSON.stringify(manifest) };
}

const CODE = /^[A-Za-z0-9_-]{1,200}$/;

/** Exchanges the redirect's code: the App made (or made already by an earlier arrival of the same redirect). */
export async function completeManifest(
  env: SetupEnv,
  input: { sessionNonce: string; code: string; state: string },
  fetchFn: typeof fetch = fetch,
  now = Date.now(),
): Promise<GithubAppRow> {
  if (!CODE.test(input.code) || !input.state)
    throw new SetupError(400, "GitHub's redirect lacks its code or state: start again from the setup page");
  const db = createDb(env);
  const stateHash = await sha256Hex(input.state);
  const row = await findManifestState(db, stateHash);
  const mine = await sessionHash(input.sessionNonce);
  if (!row || row.sessionHash !== mine) {
    logEvent({ event: "github_app_manifest_refused", reason: row ? "other_session" : "unknown_state" });
    throw new SetupError(
      403,
      "this App registration was not started from your session (or it was started more than a day ago): start again from the setup page",
    );
  }
  if (row.appRowId) {
    const made = await findApp(db, row.appRowId);
    if (made) return made;
  }
  if (row.expiresAt <= now)
    throw new SetupError(410, "this App registration started more than an hour ago, and GitHub's code has expired: start again");
  if (!(await claimManifestState(db, stateHash, mine, now))) {
    throw new SetupError(409, "this App registration is being completed in another tab or request: reload the setup page in a moment");
  }

  const endpoint = await findEndpoint(db, row.endpointName);
  let conversion: Awaited<ReturnType<typeof exchangeManifestCode>>;
  try {
    if (!endpoint) throw new SetupError(404, `the GitHub endpoint '${row.endpointName}' was deleted meanwhile`);
    conversion = await exchangeManifestCode(endpoint.apiBaseUrl, input.code, fetchFn);
  } catch (err) {
    await releaseManifestState(db, stateHash);
    if (err instanceof SetupError) throw err;
    logError({ event: "github_app_manifest_failed", endpoint: row.endpointName, error: errorText(err) });
    if (err instanceof GithubApiError && err.status === 404) {
      throw new SetupError(410, "GitHub does not know this code (each works once, for an hour): start again from the setup page");
    }
    throw new SetupError(502, `GitHub did not turn the code into an App: ${errorText(err)}. Reload this page to try again.`);
  }

  const id = crypto.randomUUID();
  const keyring = await keyringFor(env);
  // GitHub makes a webhook secret for an App with an active hook; should it not, we make one
  // and give it to the App's webhook ourselves, so its deliveries are always signed.
  let webhookSecret = conversion.webhook_secret;
  if (!webhookSecret) {
    webhookSecret = toBase64Url(crypto.getRandomValues(new Uint8Array(32)));
    await new AppSession(
      { appId: conversion.id, boundApiUrl: endpoint!.apiBaseUrl.replace(/\/+$/, ""), privateKey: conversion.pem },
      fetchFn,
    ).setWebhookSecret(webhookSecret);
  }
  const app = await insertAppFromManifest(
    db,
    {
      id,
      endpointName: row.endpointName,
      appId: conversion.id,
      slug: conversion.slug,
      name: conversion.name,
      ownerLogin: conversion.owner?.login ?? "",
      htmlUrl: conversion.html_url,
      clientId: conversion.client_id,
      clientSecretEnc: await seal(keyring, conversion.client_secret, secretContext.appClientSecret(id)),
      privateKeyEnc: await seal(keyring, conversion.pem, secretContext.appPrivateKey(id)),
      webhookSecretEnc: await seal(keyring, webhookSecret, secretContext.appOwnWebhookSecret(id)),
      permissions: JSON.stringify(conversion.permissions),
      events: JSON.stringify(conversion.events),
      createdAt: now,
    },
    stateHash,
  );
  logEvent({ event: "github_app_created", app_id: app.appId, slug: app.slug, endpoint: app.endpointName, owner: app.ownerLogin });
  return app;
}

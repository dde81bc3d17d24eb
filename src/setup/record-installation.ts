import { keyringFor } from "../crypto/keyring";
import { open, seal } from "../crypto/secret-box";
import { secretContext } from "../crypto/secret-contexts";
import { createDb } from "../db/client";
import {
  credentialNames,
  credentialsForInstallation,
  findInstallation,
  type GithubAppRow,
  installationRecord,
  saveInstallation,
} from "../db/github/github-app-store";
import { insertCredentials } from "../db/github/github-credential-store";
import type { Env } from "../env";
import { AppSession } from "../github/app/app-registration";
import { errorText, logEvent } from "../observability/log";
import { type InstallationRecord, installationCredentialsName } from "./installations";

/**
 * Keeps what we know of an installation of one of our Apps, and makes the credentials that act
 * through it the first time we hear of it (from its `installation` webhook or from the page
 * GitHub sends the user back to): the App's private key and webhook secret, sealed for the new
 * credentials, so that adding its repositories or organization needs nothing more from the user.
 */

type SetupEnv = Pick<Env, "DB" | "ENCRYPTION_KEY" | "ENCRYPTION_KEYS_PREVIOUS">;

export async function openAppSecrets(env: SetupEnv, app: GithubAppRow): Promise<{ privateKey: string; webhookSecret: string }> {
  const keyring = await keyringFor(env);
  return {
    privateKey: await open(keyring, app.privateKeyEnc, secretContext.appPrivateKey(app.id)),
    webhookSecret: await open(keyring, app.webhookSecretEnc, secretContext.appOwnWebhookSecret(app.id)),
  };
}

async function ensureCredentials(env: SetupEnv, app: GithubAppRow, rec: InstallationRecord): Promise<string> {
  const db = createDb(env);
  const existing = await credentialsForInstallation(db, app.endpointName, app.appId, rec.installationId);
  if (existing) return existing;
  const { privateKey, webhookSecret } = await openAppSecrets(env, app);
  const keyring = await keyringFor(env);
  const id = crypto.randomUUID();
  const name = installationCredentialsName(app.slug, rec.accountLogin, await credentialNames(db));
  const t = Date.now();
  try {
    await insertCredentials(db, {
      id,
      name,
      description: `GitHub App ${app.slug} (id ${app.appId}) installed on ${rec.accountLogin} (installation ${rec.installationId}); made by the first-run page`,
      endpointName: app.endpointName,
      authType: "app",
      appId: app.appId,
      installationId: rec.installationId,
      secretEnc: await seal(keyring, privateKey, secretContext.credential(id)),
      webhookSecretEnc: await seal(keyring, webhookSecret, secretContext.appWebhookSecret(id)),
      createdAt: t,
      updatedAt: t,
    });
  } catch (err) {
    // The webhook and the user's return from GitHub may both arrive at once: the other one made them.
    const made = await credentialsForInstallation(db, app.endpointName, app.appId, rec.installationId);
    if (made) return made;
    throw err;
  }
  logEvent({
    event: "github_app_credentials_created",
    credentials: id,
    app_id: app.appId,
    installation: rec.installationId,
    account: rec.accountLogin,
  });
  return id;
}

/** Stores the installation as `rec` says, with credentials for it unless it was deleted. */
export async function recordInstallation(env: SetupEnv, app: GithubAppRow, rec: InstallationRecord): Promise<void> {
  const db = createDb(env);
  const credentialsId =
    rec.status === "deleted"
      ? ((await findInstallation(db, app.id, rec.installationId))?.credentialsId ?? null)
      : await ensureCredentials(env, app, rec);
  await saveInstallation(db, app.id, rec, credentialsId, Date.now());
  logEvent({
    event: "github_app_installation_recorded",
    app_id: app.appId,
    installation: rec.installationId,
    account: rec.accountLogin,
    status: rec.status,
    repositories: rec.repositories.length,
  });
}

/**
 * Asks GitHub, as the App, about an installation (GitHub answers 404 unless it is this App's) and
 * records what it says: the page a user lands on after installing, and "check GitHub again".
 */
export async function syncInstallation(
  env: SetupEnv,
  app: GithubAppRow,
  installationId: number,
  fetchFn?: typeof fetch,
): Promise<InstallationRecord> {
  const { privateKey } = await openAppSecrets(env, app);
  const session = new AppSession({ appId: app.appId, boundApiUrl: app.boundApiUrl, privateKey }, fetchFn);
  const inst = await session.installation(installationId);
  const previous = await findInstallation(createDb(env), app.id, installationId);
  let repositories: string[];
  try {
    repositories = (await session.installationRepositories(installationId)).sort();
  } catch (err) {
    // A suspended installation mints no token: keep what we knew of its repositories.
    logEvent({ event: "github_app_repositories_unread", installation: installationId, error: errorText(err) });
    repositories = previous ? installationRecord(previous).repositories : [];
  }
  const rec: InstallationRecord = {
    installationId,
    accountLogin: inst.account?.login ?? previous?.accountLogin ?? "unknown",
    accountType: inst.account?.type ?? previous?.accountType ?? "User",
    repositorySelection: inst.repository_selection,
    repositories,
    status: inst.suspended_at ? "suspended" : "active",
  };
  await recordInstallation(env, app, rec);
  return rec;
}

/** Every installation GitHub knows of the App, synced (the page's "check GitHub again"). */
export async function syncAllInstallations(env: SetupEnv, app: GithubAppRow, fetchFn?: typeof fetch): Promise<number> {
  const { privateKey } = await openAppSecrets(env, app);
  const session = new AppSession({ appId: app.appId, boundApiUrl: app.boundApiUrl, privateKey }, fetchFn);
  const all = await session.installations();
  for (const inst of all) await syncInstallation(env, app, inst.id, fetchFn);
  return all.length;
}

import type { DeliverySubject } from "./payload";

/**
 * GitHub App webhooks. An App has one webhook for all its installations: every installation's
 * events arrive at the same URL, signed with the App's webhook secret, naming the installation
 * in `installation.id`. An App credential (one installation of one App) may hold that secret.
 * A delivery it verifies speaks for the entities that act through that credential, and only
 * when the payload's installation is the credential's: the App secret is shared by every
 * installation, so the installation id is what keeps one installation's deliveries out of
 * another's scale sets.
 */

/** An App credential that holds the App's webhook secret. */
export interface AppHook {
  /** The credential's id. */
  id: string;
  appId: number;
  installationId: number;
  webhookSecretEnc: string;
}

/**
 * The App credentials whose webhook secret may have signed a delivery: none unless the payload
 * is one an App's webhook sends (it names an installation, or it is the App's own `ping`, which
 * names the App). Which one did is decided by the signature; several may, since every
 * installation's credential of one App holds the same secret.
 */
export function appHookCandidates<A extends AppHook>(hooks: readonly A[], subject: DeliverySubject): A[] {
  if (subject.installation) return [...hooks];
  const appId = subject.hook?.type === "App" ? subject.hook.app_id : null;
  return appId === null ? [] : hooks.filter((h) => h.appId === appId);
}

/**
 * The entities an App delivery speaks for: among those the payload names (its repository, the
 * organization that owns it, its enterprise), the ones acting through a credential whose secret
 * verified it and whose installation is the payload's.
 */
export function appSigners<E extends { credentialsId: string }>(
  named: readonly E[],
  verified: readonly AppHook[],
  installationId: number | null,
): E[] {
  if (installationId === null) return [];
  const credentials = new Set(verified.filter((h) => h.installationId === installationId).map((h) => h.id));
  return named.filter((e) => credentials.has(e.credentialsId));
}

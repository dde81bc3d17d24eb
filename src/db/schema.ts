// The tables are declared beside their stores (src/db/<aggregate>/schema.ts); this collects the
// ones the drizzle client and the /metrics row counts name, in one object.
import { apiTokens, auditLog } from "./access/schema";
import { githubBudget } from "./budget/schema";
import { entities } from "./directory/schema";
import {
  githubAppInstallations,
  githubAppManifests,
  githubApps,
  githubCache,
  githubCredentialState,
  githubCredentials,
  githubEndpoints,
} from "./github/schema";
import { jobs, webhookDeliveries } from "./jobs/schema";
import { counters, metricHistograms, scaleSetSamples, usageDays } from "./metrics/schema";
import { providers } from "./providers/schema";
import { deliveryRecoveries, deliveryWatches, recoveryLastPass } from "./recovery/schema";
import { retentionCursors, retentionLastRun } from "./retention/schema";
import { instances } from "./runner/schema";
import { scaleSets } from "./scaleset/schema";

export const schema = {
  deliveryWatches,
  deliveryRecoveries,
  recoveryLastPass,
  githubEndpoints,
  githubCredentials,
  githubCredentialState,
  githubCache,
  githubApps,
  githubAppInstallations,
  githubAppManifests,
  entities,
  providers,
  scaleSets,
  instances,
  jobs,
  webhookDeliveries,
  counters,
  githubBudget,
  retentionLastRun,
  retentionCursors,
  apiTokens,
  auditLog,
  metricHistograms,
  scaleSetSamples,
  usageDays,
};

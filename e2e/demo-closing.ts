/**
 * What `npm run demo` prints once its jobs are served: the dashboard first (where a newcomer
 * looks), with the admin token to sign in with, then curl lines for the API and the fake GitHub.
 */
export interface DemoEnd {
  /** The coordinator under `wrangler dev`, e.g. http://127.0.0.1:8787. */
  coordinatorUrl: string;
  adminToken: string;
  scaleSetId: string;
  /** The fake GitHub's control API, where more jobs are queued. */
  fakeGithubUrl: string;
}

export function demoClosing({ coordinatorUrl: url, adminToken, scaleSetId, fakeGithubUrl }: DemoEnd): string {
  return `
The coordinator is still running. Look at it in the dashboard first:
  ${url}/ui    # sign in with the admin token ${adminToken}
  ${url}/ui/scalesets/${scaleSetId}    # the demo's scale set: its runners, transitions and jobs
Or through the API:
  export T='Authorization: Bearer ${adminToken}' U=${url}/api/v1
  curl -sH "$T" $U/scalesets/${scaleSetId}        # the object's state, last reconcile
  curl -sH "$T" $U/instances                  # every runner, with status
  curl -sH "$T" "$U/jobs?limit=20"            # the jobs the webhooks brought in
  curl -s -X POST -H 'content-type: application/json' ${fakeGithubUrl}/_fake/workflow-jobs \\
    -d '{"repository":"octo/app","labels":["self-hosted","linux","demo"],"count":3}'   # queue more jobs
Ctrl-C stops everything.`;
}

// The runner's system service as GARM names and runs it: the metadata routes serve GARM's
// formats, so a bootstrap written for GARM finds the same service and unit.

/** GARM's service name: `actions.runner.<owner>[.<repo>]`. */
export function serviceName(entity: { kind: string; owner: string; name: string }): string {
  return entity.kind === "repository" ? `actions.runner.${entity.owner}.${entity.name}` : `actions.runner.${entity.owner}`;
}

export function systemdUnit(service: string, user: string): string {
  return `[Unit]
Description=GitHub Actions Runner (${service})
After=network-online.target
Wants=network-online.target

[Service]
ExecStart=/home/${user}/actions-runner/runsvc.sh
User=${user}
WorkingDirectory=/home/${user}/actions-runner
KillMode=process
KillSignal=SIGTERM
TimeoutStopSec=5min

[Install]
WantedBy=multi-user.target
`;
}

import type { InstallScriptInput } from "./install-script";
import { commentSafe, psQuote } from "./install-script";

/**
 * The steps, the same for every instance, written raw; every value an instance brings comes
 * in through the single-quoted assignments at the top.
 */
const BODY = String.raw`
$RunnerDir = if ($env:EDGERUNNER_RUNNER_DIR) { $env:EDGERUNNER_RUNNER_DIR } else { 'C:\actions-runner' }
$Headers = @{ Authorization = "Bearer $Token" }

function Call-Home([string]$Route, $Body) {
  Invoke-RestMethod -Method Post -Uri "$CallbackUrl/$Route" -Headers $Headers -ContentType 'application/json' -Body ($Body | ConvertTo-Json -Compress) | Out-Null
}
function Report([string]$Message) {
  try { Call-Home 'status' @{ status = 'installing'; message = $Message } } catch { Write-Warning "edgerunner: could not report: $Message" }
}
function Fail([string]$Message) {
  try { Call-Home 'status' @{ status = 'failed'; message = $Message } } catch { Write-Warning 'edgerunner: could not report the failure' }
  Write-Error "edgerunner: $Message" -ErrorAction Continue
  exit 1
}
function Fetch([string]$Route, [string]$OutFile, [int]$Tries = 1) {
  for ($i = 1; ; $i++) {
    try { Invoke-WebRequest -UseBasicParsing -Uri "$MetadataUrl/$Route" -Headers $Headers -OutFile $OutFile; return }
    catch { if ($i -ge $Tries) { Fail "could not fetch $Route" }; Start-Sleep -Seconds 2 }
  }
}

try {
  $FileName = Split-Path -Leaf $FileName
  Report "downloading runner $FileName"
  New-Item -ItemType Directory -Force -Path $RunnerDir | Out-Null
  Set-Location $RunnerDir
  $dl = @{}
  if ($DownloadToken) { $dl = @{ Authorization = "Bearer $DownloadToken" } }
  try { Invoke-WebRequest -UseBasicParsing -Uri $DownloadUrl -Headers $dl -OutFile $FileName } catch { Fail "could not download the runner from $DownloadUrl" }
  if ($DownloadSha256) {
    Report 'verifying runner checksum'
    if ((Get-FileHash -Algorithm SHA256 $FileName).Hash.ToLower() -ne $DownloadSha256.ToLower()) { Fail 'runner checksum does not match' }
  }
  Report 'unpacking runner'
  Expand-Archive -Path $FileName -DestinationPath $RunnerDir -Force
  Remove-Item $FileName
  if ($JitConfig) {
    Report 'fetching runner configuration'
    # Minted now in a burst: each try may wait up to a minute in line for GitHub's budget (503 after).
    Fetch 'credentials/runner' '.runner' 30
    Fetch 'credentials/credentials' '.credentials'
    Fetch 'credentials/credentials_rsaparams' '.credentials_rsaparams'
    Report 'installing runner service'
    $svc = $ServiceName + '.' + $RunnerName
    New-Service -Name $svc -BinaryPathName "$RunnerDir\bin\RunnerService.exe" -StartupType Automatic | Out-Null
    Report 'starting runner service'
    Start-Service -Name $svc
  } else {
    Report 'fetching registration token'
    try { $RegistrationToken = (Invoke-WebRequest -UseBasicParsing -Uri "$MetadataUrl/runner-registration-token/" -Headers $Headers).Content } catch { Fail 'could not fetch the registration token' }
    Report 'configuring runner'
    $config = @('--unattended', '--url', $RepoUrl, '--token', $RegistrationToken, '--name', $RunnerName, '--labels', $RunnerLabels)
    if ($RunnerGroup) { $config += @('--runnergroup', $RunnerGroup) }
    $config += @('--ephemeral', '--replace', '--runasservice')
    & .\config.cmd @config
    if ($LASTEXITCODE -ne 0) { Fail 'could not configure the runner' }
  }
  $AgentId = $null
  if (Test-Path '.runner') { $AgentId = (Get-Content '.runner' -Raw | ConvertFrom-Json).agentId }
  $os = Get-CimInstance Win32_OperatingSystem
  try { Call-Home 'system-info/' @{ os_name = $os.Caption; os_version = $os.Version; agent_id = $AgentId } } catch { Write-Warning 'edgerunner: could not send system info' }
} catch {
  Fail "bootstrap failed: $($_.Exception.Message)"
}
try { Call-Home 'status' @{ status = 'idle'; message = 'runner successfully installed'; agent_id = $AgentId } } catch { Write-Error 'edgerunner: could not report the runner as installed'; exit 1 }
`;

/** The Windows bootstrap: the same steps as Linux, in PowerShell. */
export function windowsInstallScript(i: InstallScriptInput): string {
  const r = i.registration;
  const vars: [string, string][] = [
    ["MetadataUrl", i.metadataUrl],
    ["CallbackUrl", i.callbackUrl],
    ["Token", i.token],
    ["RunnerName", i.instanceName],
    ["ServiceName", i.serviceName],
    ["DownloadUrl", i.tool.download_url],
    ["DownloadToken", i.tool.temp_download_token ?? ""],
    ["DownloadSha256", i.tool.sha256_checksum ?? ""],
    ["FileName", i.tool.filename],
    ["RepoUrl", r?.repoUrl ?? ""],
    ["RunnerLabels", r?.labels.join(",") ?? ""],
    ["RunnerGroup", r?.runnerGroup ?? ""],
  ];
  return [
    `# Edgerunner runner bootstrap for ${commentSafe(i.instanceName)}. Rendered for this instance only: it holds its token.`,
    "$ErrorActionPreference = 'Stop'",
    ...vars.map(([k, v]) => `$${k} = ${psQuote(v)}`),
    `$JitConfig = ${r ? "$false" : "$true"}`,
    BODY,
  ].join("\n");
}

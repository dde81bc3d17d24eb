import type { InstallScriptInput } from "./install-script";
import { commentSafe, psQuote } from "./install-script";

/**
 * The steps, the same for every instance, written raw; every value an instance brings comes
 * in through the single-quoted assignments at the top.
 */
const BODY = String.raw`
$RunnerDir = if ($env:EDGERUNNER_RUNNER_DIR) { $env:EDGERUNNER_RUNNER_DIR } else { 'C:\actions-runner' }
$Headers = @{ Authorization = "Bearer $Token" }

# Every call is tried as the Linux script's curl --retry N --retry-delay 2 --retry-connrefused tries
# it: again after no answer at all or a 408, 429, 500, 502, 503 or 504 (any other status is final),
# up to N more times, 2 s later or after the answer's Retry-After when that is longer. curl sets no
# limit on Retry-After; here a wait is at most 60 s, the shortest bootstrap timeout (which counts from
# the machine's last ask), so a stray header cannot put the machine to sleep past it.
# Windows PowerShell 5.1 throws a WebException whose Response is an HttpWebResponse (headers by
# name), PowerShell 7 an HttpResponseException whose Response is an HttpResponseMessage
# (Headers.RetryAfter: seconds or a date); without an answer there is no Response.
function Retry-Seconds($Answer) {
  $after = if ($Answer -is [System.Net.WebResponse]) { $Answer.Headers['Retry-After'] } elseif ($Answer) { "$($Answer.Headers.RetryAfter)" }
  [long]$seconds = 0
  $date = [DateTimeOffset]::MinValue
  if (-not [long]::TryParse("$after", [ref]$seconds) -and [DateTimeOffset]::TryParseExact("$after", 'r', [Globalization.CultureInfo]::InvariantCulture, [Globalization.DateTimeStyles]::AssumeUniversal, [ref]$date)) {
    $seconds = [long][Math]::Ceiling(($date - [DateTimeOffset]::UtcNow).TotalSeconds)
  }
  [int][Math]::Min(60, [Math]::Max(2, $seconds))
}
function With-Retries([int]$Retries, [scriptblock]$Call) {
  for ($try = 0; ; $try++) {
    try { return & $Call }
    catch {
      $answer = $_.Exception.Response
      if ($try -ge $Retries -or ($answer -and [int]$answer.StatusCode -notin 408, 429, 500, 502, 503, 504)) { throw }
      Start-Sleep -Seconds (Retry-Seconds $answer)
    }
  }
}
function Call-Home([string]$Route, $Body) {
  With-Retries 5 { Invoke-RestMethod -UseBasicParsing -Method Post -Uri "$CallbackUrl/$Route" -Headers $Headers -ContentType 'application/json' -Body ($Body | ConvertTo-Json -Compress) } | Out-Null
}
function Report([string]$Message) {
  try { Call-Home 'status' @{ status = 'installing'; message = $Message } } catch { Write-Warning "edgerunner: could not report: $Message" }
}
function Fail([string]$Message) {
  try { Call-Home 'status' @{ status = 'failed'; message = $Message } } catch { Write-Warning 'edgerunner: could not report the failure' }
  Write-Error "edgerunner: $Message" -ErrorAction Continue
  exit 1
}
function Fetch([string]$Route, [string]$OutFile, [int]$Retries = 5) {
  try { With-Retries $Retries { Invoke-WebRequest -UseBasicParsing -Uri "$MetadataUrl/$Route" -Headers $Headers -OutFile $OutFile } } catch { Fail "could not fetch $Route" }
}

try {
  $FileName = Split-Path -Leaf $FileName
  Report "downloading runner $FileName"
  New-Item -ItemType Directory -Force -Path $RunnerDir | Out-Null
  Set-Location $RunnerDir
  $dl = @{}
  if ($DownloadToken) { $dl = @{ Authorization = "Bearer $DownloadToken" } }
  try { With-Retries 5 { Invoke-WebRequest -UseBasicParsing -Uri $DownloadUrl -Headers $dl -OutFile $FileName } } catch { Fail "could not download the runner from $DownloadUrl" }
  if ($DownloadSha256) {
    Report 'verifying runner checksum'
    if ((Get-FileHash -Algorithm SHA256 $FileName).Hash.ToLower() -ne $DownloadSha256.ToLower()) { Fail 'runner checksum does not match' }
  }
  Report 'unpacking runner'
  Expand-Archive -Path $FileName -DestinationPath $RunnerDir -Force
  Remove-Item $FileName
  if ($JitConfig) {
    Report 'fetching runner configuration'
    # Minted now in a burst: each try may wait in line for GitHub's budget (JIT_WAIT_SECONDS), then 503 + Retry-After.
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
    # A retry after a lost answer gets the same token (the coordinator seals it before it answers).
    try { $RegistrationToken = (With-Retries 5 { Invoke-WebRequest -UseBasicParsing -Uri "$MetadataUrl/runner-registration-token/" -Headers $Headers }).Content } catch { Fail 'could not fetch the registration token' }
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

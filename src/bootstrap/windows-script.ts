import type { InstallScriptInput } from "./install-script";

const psQuote = (v: string) => `'${v.replaceAll("'", "''")}'`;

/** The Windows bootstrap, the same steps as Linux in PowerShell. */
export function windowsInstallScript(i: InstallScriptInput): string {
  return `# Edgerunner runner bootstrap for ${i.instanceName}. Rendered for this instance only.
$ErrorActionPreference = 'Stop'
$MetadataUrl = ${psQuote(i.metadataUrl)}
$CallbackUrl = ${psQuote(i.callbackUrl)}
$Token = ${psQuote(i.token)}
$DownloadUrl = ${psQuote(i.tool.download_url)}
$DownloadToken = ${psQuote(i.tool.temp_download_token ?? "")}
$DownloadSha256 = ${psQuote(i.tool.sha256_checksum ?? "")}
$FileName = ${psQuote(i.tool.filename)}
$RunnerDir = if ($env:EDGERUNNER_RUNNER_DIR) { $env:EDGERUNNER_RUNNER_DIR } else { 'C:\\actions-runner' }
$Headers = @{ Authorization = "Bearer $Token" }

function Call-Home([string]$Route, $Body) {
  try { Invoke-RestMethod -Method Post -Uri "$CallbackUrl/$Route" -Headers $Headers -ContentType 'application/json' -Body ($Body | ConvertTo-Json -Compress) | Out-Null }
  catch { Write-Warning "edgerunner: could not reach the coordinator ($Route)" }
}
function Report([string]$Message) { Call-Home 'status' @{ status = 'installing'; message = $Message } }
function Fail([string]$Message) { Call-Home 'status' @{ status = 'failed'; message = $Message }; Write-Error "edgerunner: $Message" -ErrorAction Continue; exit 1 }
function Fetch([string]$Route, [string]$OutFile) {
  try { Invoke-WebRequest -UseBasicParsing -Uri "$MetadataUrl/$Route" -Headers $Headers -OutFile $OutFile } catch { Fail "could not fetch $Route" }
}

try {
  Report "downloading runner $FileName"
  New-Item -ItemType Directory -Force -Path $RunnerDir | Out-Null
  Set-Location $RunnerDir
  $dl = @{}
  if ($DownloadToken) { $dl = @{ Authorization = "Bearer $DownloadToken" } }
  Invoke-WebRequest -UseBasicParsing -Uri $DownloadUrl -Headers $dl -OutFile $FileName
  if ($DownloadSha256) {
    Report 'verifying runner checksum'
    if ((Get-FileHash -Algorithm SHA256 $FileName).Hash.ToLower() -ne $DownloadSha256.ToLower()) { Fail 'runner checksum does not match' }
  }
  Report 'unpacking runner'
  Expand-Archive -Path $FileName -DestinationPath $RunnerDir -Force
  Remove-Item $FileName
  Report 'fetching runner configuration'
  Fetch 'credentials/runner' '.runner'
  Fetch 'credentials/credentials' '.credentials'
  Fetch 'credentials/credentials_rsaparams' '.credentials_rsaparams'
  $AgentId = (Get-Content '.runner' -Raw | ConvertFrom-Json).agentId
  Report 'installing runner service'
  $svc = 'actions.runner.' + ${psQuote(i.serviceName.replace(/^actions\.runner\./, ""))} + '.' + ${psQuote(i.instanceName)}
  New-Service -Name $svc -BinaryPathName "$RunnerDir\\bin\\RunnerService.exe" -StartupType Automatic | Out-Null
  Start-Service -Name $svc
  $os = Get-CimInstance Win32_OperatingSystem
  Call-Home 'system-info' @{ os_name = $os.Caption; os_version = $os.Version; agent_id = $AgentId }
  Call-Home 'status' @{ status = 'idle'; message = 'runner successfully installed'; agent_id = $AgentId }
} catch {
  Fail "bootstrap failed: $($_.Exception.Message)"
}
`;
}

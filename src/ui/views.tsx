import type { Child, FC } from "hono/jsx";

/**
 * The dashboard's pages: server-rendered JSX, no script at all. Hono's JSX escapes every
 * text and attribute value, so names and messages from D1, GitHub or a shim are shown as text.
 */

const CSS = `
:root{--fg:#1d232b;--mut:#5c6773;--bg:#f6f7f9;--card:#fff;--line:#dfe3e8;--ok:#1a7f37;--warn:#9a6700;--bad:#cf222e;--acc:#0b5cad}
*{box-sizing:border-box}body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--fg);background:var(--bg)}
header{display:flex;align-items:center;gap:1.5rem;padding:.6rem 1.5rem;background:#14202e;color:#fff}
header a{color:#dbe7f5;text-decoration:none}header a:hover{text-decoration:underline}header .brand{font-weight:700;color:#fff;font-size:16px}
header form{margin-left:auto}main{max-width:1400px;margin:0 auto;padding:1rem 1.5rem 3rem}
h1{font-size:20px;margin:.4rem 0 1rem}h2{font-size:16px;margin:1.6rem 0 .5rem}
table{border-collapse:collapse;width:100%;background:var(--card);border:1px solid var(--line);border-radius:6px;overflow:hidden}
th,td{text-align:left;padding:.35rem .6rem;border-bottom:1px solid var(--line);vertical-align:top}th{background:#eef1f4;font-weight:600;font-size:12px;text-transform:uppercase;letter-spacing:.03em;color:var(--mut)}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}tr:last-child td{border-bottom:0}
.badge{display:inline-block;padding:0 .45rem;border-radius:9px;font-size:12px;font-weight:600;background:#eef1f4;color:var(--mut)}
.ok{color:var(--ok)}.warn{color:var(--warn)}.bad{color:var(--bad)}.badge.ok{background:#dafbe1}.badge.warn{background:#fff8c5}.badge.bad{background:#ffebe9}
.mut{color:var(--mut)}.small{font-size:12px}.fault{max-width:32rem;white-space:pre-wrap;word-break:break-word;font-size:12px}
.actions{display:flex;gap:.5rem;flex-wrap:wrap;margin:.5rem 0 1rem}td .actions{margin:0}form.inline{display:inline}
button{font:inherit;padding:.25rem .7rem;border:1px solid #b7c0ca;border-radius:5px;background:#fff;cursor:pointer}button:hover{background:#eef1f4}
button.danger{border-color:#e5a5a5;color:var(--bad)}button.primary{background:var(--acc);border-color:var(--acc);color:#fff}
.flash{padding:.5rem .8rem;border-radius:5px;margin-bottom:1rem;background:#dafbe1;border:1px solid #a7e3b5}.flash.bad{background:#ffebe9;border-color:#f1b3b0}
dl.kv{display:grid;grid-template-columns:max-content 1fr;gap:.2rem 1rem;margin:0 0 1rem}dl.kv dt{color:var(--mut)}dl.kv dd{margin:0}
.card{background:var(--card);border:1px solid var(--line);border-radius:6px;padding:.8rem 1rem;margin:.5rem 0 1rem}
.card label,.offers label{display:block;margin:.3rem 0}.card input:not([type=checkbox]):not([type=radio]),.card select{font:inherit;padding:.25rem .4rem;border:1px solid #b7c0ca;border-radius:5px;min-width:16rem}
fieldset{border:1px solid var(--line);border-radius:5px;margin:.5rem 0}ol.steps{background:var(--card);border:1px solid var(--line);border-radius:6px;padding:.6rem 2rem}ol.steps li{margin:.25rem 0}
a.button{display:inline-block;padding:.25rem .7rem;border:1px solid #b7c0ca;border-radius:5px;background:#fff;color:var(--fg);text-decoration:none}a.button.primary{background:var(--acc);border-color:var(--acc);color:#fff}
code{background:#eef1f4;padding:0 .25rem;border-radius:3px}
.shaped-only{display:none}form:has(input[name=shaped]:checked) .shaped-only{display:block}form:has(input[name=shaped]:checked) .unshaped-only{display:none}
.charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(380px,1fr));gap:1rem;margin:.5rem 0 1rem}
figure.chart{margin:0;background:var(--card);border:1px solid var(--line);border-radius:6px;padding:.5rem .8rem}figure.chart figcaption{font-weight:600;font-size:13px;margin-bottom:.3rem}
.login{max-width:24rem;margin:12vh auto;background:var(--card);border:1px solid var(--line);border-radius:8px;padding:1.5rem}
.login input{width:100%;padding:.45rem;margin:.4rem 0 1rem;font:inherit;border:1px solid #b7c0ca;border-radius:5px}
`;

export const Page: FC<{ title: string; csrf?: string; children?: Child }> = ({ title, csrf, children }) => (
  <html lang="en">
    <head>
      <meta charset="utf-8" />
      <meta name="viewport" content="width=device-width, initial-scale=1" />
      <title>{`${title} · Edgerunner`}</title>
      <style dangerouslySetInnerHTML={{ __html: CSS }} />
    </head>
    <body>
      {csrf !== undefined && (
        <header>
          <a class="brand" href="/ui">
            Edgerunner
          </a>
          <a href="/ui">Overview</a>
          <a href="/ui/jobs">Jobs</a>
          <a href="/ui/jobs?unmatched=true">Unmatched jobs</a>
          <a href="/ui/audit">Audit</a>
          <a href="/ui/doctor">Doctor</a>
          <a href="/ui/setup">Setup</a>
          <form method="post" action="/ui/logout">
            <input type="hidden" name="_csrf" value={csrf} />
            <button type="submit">Log out</button>
          </form>
        </header>
      )}
      <main>{children}</main>
    </body>
  </html>
);

export const LoginPage: FC<{ error?: string; next?: string | null }> = ({ error, next }) => (
  <Page title="Log in">
    <form class="login" method="post" action="/ui/login">
      {next && <input type="hidden" name="next" value={next} />}
      <h1>Edgerunner</h1>
      {error && <p class="flash bad">{error}</p>}
      <label for="token">Admin token</label>
      <input id="token" name="token" type="password" autocomplete="current-password" required autofocus />
      <button class="primary" type="submit">
        Log in
      </button>
    </form>
  </Page>
);

export const Flash: FC<{ message?: string | null; bad?: boolean }> = ({ message, bad }) =>
  message ? <p class={bad ? "flash bad" : "flash"}>{message}</p> : null;

/** A POST button carrying the CSRF token. */
export const Action: FC<{ action: string; csrf: string; label: string; danger?: boolean; fields?: Record<string, string> }> = (p) => (
  <form class="inline" method="post" action={p.action}>
    <input type="hidden" name="_csrf" value={p.csrf} />
    {Object.entries(p.fields ?? {}).map(([k, v]) => (
      <input type="hidden" name={k} value={v} />
    ))}
    <button type="submit" class={p.danger ? "danger" : undefined}>
      {p.label}
    </button>
  </form>
);

export function statusClass(status: string): string {
  if (status === "running" || status === "idle" || status === "ok" || status === "completed") return "badge ok";
  if (status === "error" || status === "failed" || status === "failing" || status === "pending_force_delete") return "badge bad";
  if (
    status.includes("delete") ||
    status === "creating" ||
    status === "pending_create" ||
    status === "queued" ||
    status === "installing" ||
    status === "pending"
  )
    return "badge warn";
  return "badge";
}

export const Badge: FC<{ v: string }> = ({ v }) => <span class={statusClass(v)}>{v}</span>;

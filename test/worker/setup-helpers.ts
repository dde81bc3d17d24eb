import { expect } from "vitest";
import { login, ORIGIN, type Page, ui } from "./ui-helpers";

// The first-run page's GitHub App round trip as a browser makes it: the dashboard's forms through
// the Worker, GitHub's pages on the fake GitHub (its manifest and installation pages).

const decode = (s: string) =>
  s.replaceAll("&quot;", '"').replaceAll("&#39;", "'").replaceAll("&lt;", "<").replaceAll("&gt;", ">").replaceAll("&amp;", "&");

/** The first capture of `re` in a page, HTML entities decoded. */
export function attr(html: string, re: RegExp): string {
  const m = re.exec(html);
  if (!m) throw new Error(`not in the page: ${re}\n${html.slice(0, 2000)}`);
  return decode(m[1]!);
}

export async function sessionWithCsrf(): Promise<{ cookie: string; csrf: string }> {
  const { cookie } = await login();
  const page = await ui("GET", "/ui/setup", { cookie: cookie! });
  expect(page.status).toBe(200);
  return { cookie: cookie!, csrf: attr(page.html, /name="_csrf" value="([^"]+)"/) };
}

/** A form post to the fake GitHub's web pages, as the browser makes it; the redirect is not followed. */
export function postForm(url: string, form: Record<string, string>): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(form).toString(),
    redirect: "manual",
  });
}

/**
 * The page's "Create a GitHub App" (owned by the organization octo), then GitHub's confirmation:
 * where GitHub sends the browser back (path and query), and the page that posted the manifest.
 */
export async function createAppAtGithub(
  s: { cookie: string; csrf: string },
  endpoint: string,
  name: string,
): Promise<{ back: string; started: Page }> {
  const started = await ui("POST", "/ui/setup/app", {
    cookie: s.cookie,
    form: { _csrf: s.csrf, endpoint, name, owner: "organization", org: "octo", repository_runners: "on", organization_runners: "on" },
  });
  expect(started.status, started.html).toBe(200);
  const postUrl = attr(started.html, /<form method="post" action="([^"]+)" id="to-github"/);
  const manifest = attr(started.html, /name="manifest" value="([^"]+)"/);
  const confirm = await postForm(postUrl, { manifest });
  expect(confirm.status).toBe(200);
  expect(await confirm.text()).toContain("Create GitHub App for");
  const created = await postForm(postUrl, { manifest, confirm: "1", name });
  expect(created.status).toBe(302);
  const back = new URL(created.headers.get("location")!);
  expect(back.origin).toBe(ORIGIN);
  return { back: `${back.pathname}${back.search}`, started };
}

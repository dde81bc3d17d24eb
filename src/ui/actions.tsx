import { type Context, Hono } from "hono";
import { logEvent } from "../observability/log";
import { type ApiAnswer, type ApiDispatch, callAdminApi } from "./admin-api";
import type { FlashKey } from "./flash";
import type { UiEnv } from "./session-middleware";
import { Page } from "./views";

/**
 * The few things an operator does from the dashboard while jobs wait: pause or resume a scale
 * set, reconcile it now, lift its create backoff or its spend guard, delete an instance. Each is one admin API call;
 * on success the browser goes back to the page it came from with a flash, else sees the API's error.
 */

/** Back to `back` with a flash, or the API's error as a page with the API's status. */
function afterAction(c: Context<UiEnv>, r: ApiAnswer, back: string, flash: FlashKey) {
  if (r.status >= 200 && r.status < 300) return c.redirect(`${back}${back.includes("?") ? "&" : "?"}done=${flash}`, 303);
  const details = r.body && typeof r.body === "object" ? JSON.stringify(r.body.details ?? "") : "";
  return c.html(
    <Page title="Action failed" csrf={c.get("csrf")}>
      <p class="flash bad">
        {`The action failed (${r.status}): ${r.body?.error ?? r.body}`} {details && details !== '""' ? details : ""}
      </p>
      <a href={back}>Back</a>
    </Page>,
    r.status >= 400 && r.status < 600 ? (r.status as 400) : 500,
  );
}

export function actionRoutes(dispatch: ApiDispatch) {
  const api = (c: Context<UiEnv>, method: string, path: string, body?: unknown) => callAdminApi(c, dispatch, method, path, body);
  return new Hono<UiEnv>()
    .post("/scalesets/:id/enabled", async (c) => {
      const id = c.req.param("id");
      const form = await c.req.parseBody();
      const enabled = form.enabled === "true";
      const r = await api(c, "PUT", `/scalesets/${encodeURIComponent(id)}`, { enabled });
      logEvent({ event: "ui_action", action: enabled ? "resume" : "pause", scale_set: id, status: r.status });
      return afterAction(c, r, `/ui/scalesets/${id}`, enabled ? "resumed" : "paused");
    })
    .post("/scalesets/:id/reconcile", async (c) => {
      const id = c.req.param("id");
      const r = await api(c, "POST", `/scalesets/${encodeURIComponent(id)}/reconcile`);
      logEvent({ event: "ui_action", action: "reconcile", scale_set: id, status: r.status });
      return afterAction(c, r, `/ui/scalesets/${id}`, "reconciled");
    })
    .post("/scalesets/:id/reset", async (c) => {
      const id = c.req.param("id");
      const r = await api(c, "POST", `/scalesets/${encodeURIComponent(id)}/reset`);
      logEvent({ event: "ui_action", action: "reset_backoff", scale_set: id, status: r.status });
      return afterAction(c, r, `/ui/scalesets/${id}`, "reset");
    })
    .post("/scalesets/:id/spend-guard/reset", async (c) => {
      const id = c.req.param("id");
      const r = await api(c, "POST", `/scalesets/${encodeURIComponent(id)}/spend-guard/reset`);
      logEvent({ event: "ui_action", action: "reset_spend_guard", scale_set: id, status: r.status });
      return afterAction(c, r, `/ui/scalesets/${id}`, "spend_reset");
    })
    .post("/instances/:name/delete", async (c) => {
      const name = c.req.param("name");
      const form = await c.req.parseBody();
      const force = form.force === "true";
      // Only back to one of our scale set pages: `back` comes from the form.
      const back = typeof form.back === "string" && /^\/ui\/scalesets\/[0-9a-f-]{36}$/.test(form.back) ? form.back : "/ui";
      const r = await api(c, "DELETE", `/instances/${encodeURIComponent(name)}${force ? "?force=true" : ""}`);
      logEvent({ event: "ui_action", action: force ? "force_delete" : "delete", instance: name, status: r.status });
      return afterAction(c, r, back, force ? "force_deleting" : "deleting");
    });
}

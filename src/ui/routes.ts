import { Hono } from "hono";
import type { AppEnv } from "../env";
import { SETUP_PATHS } from "../setup/app-manifest";
import { actionRoutes } from "./actions";
import type { ApiDispatch } from "./admin-api";
import { auditRoutes } from "./pages/audit";
import { doctorRoutes } from "./pages/doctor";
import { jobsRoutes } from "./pages/jobs";
import { loginRoutes, logoutRoutes } from "./pages/login";
import { overviewRoutes } from "./pages/overview";
import { scaleSetRoutes } from "./pages/scaleset";
import { noStore, securityHeaders } from "./security-headers";
import { requireSession, type UiEnv } from "./session-middleware";
import { returnFromGithub } from "./setup/return-bounce";
import { setupRoutes } from "./setup/setup-routes";

/**
 * The dashboard at /ui: server-rendered pages over D1 and the scale set objects' status, and
 * POST forms for the few actions an operator takes while jobs wait. Actions go through the
 * admin API itself (dispatched in-process), so they validate, nudge and log exactly as the API does.
 */
export function createUiRoutes(dispatch: ApiDispatch) {
  const ui = new Hono<AppEnv>();
  ui.use("*", securityHeaders, noStore);
  ui.route("/", loginRoutes);
  ui.use(SETUP_PATHS.appCreated.replace(/^\/ui/, ""), returnFromGithub);
  ui.use(SETUP_PATHS.installed.replace(/^\/ui/, ""), returnFromGithub);

  // Mounted after the login page, so that only the login page goes without a session; POSTs
  // also need the session's CSRF token.
  const session = new Hono<UiEnv>();
  session.use("*", requireSession);
  session.route("/", logoutRoutes);
  session.route("/", overviewRoutes);
  session.route("/", scaleSetRoutes);
  session.route("/", jobsRoutes);
  session.route("/", auditRoutes);
  session.route("/", doctorRoutes);
  session.route("/", actionRoutes(dispatch));
  session.route("/", setupRoutes(dispatch));
  ui.route("/", session);
  return ui;
}

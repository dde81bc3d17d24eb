import { Hono } from "hono";
import { DoctorReport, runDoctor } from "../doctor-report";
import type { UiEnv } from "../session-middleware";
import { Page } from "../views";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The setup check: every link a runner depends on, and what to fix (`?scaleset=ID` for one scale set). */
export const doctorRoutes = new Hono<UiEnv>().get("/doctor", async (c) => {
  const wanted = c.req.query("scaleset");
  const scaleSetId = wanted && UUID.test(wanted) ? wanted : undefined;
  const report = await runDoctor(c.env, { scaleSetId, requestUrl: c.req.url });
  return c.html(
    <Page title="Doctor" csrf={c.get("csrf")}>
      <h1>Doctor</h1>
      <p class="mut small">
        {"Each link a runner depends on, checked now: the configuration, GitHub credentials and webhooks, provider shims, scale sets. " +
          "The same report: GET /api/v1/doctor, or npx edgerunner doctor (which also tries PUBLIC_URL from outside)."}
        {scaleSetId && (
          <>
            {" Only one scale set: "}
            <a href="/ui/doctor">check everything</a>.
          </>
        )}
      </p>
      {report ? <DoctorReport report={report} /> : <p class="flash bad">No such scale set.</p>}
    </Page>,
    report ? 200 : 404,
  );
});

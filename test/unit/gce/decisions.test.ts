/**
 * The GCE shim's pure decisions: the launch plan and what rules attempts out, how a Compute
 * Engine error is answered, label values, extra_specs and the insert body, and the token's JWT.
 */
import { createPublicKey, createVerify, generateKeyPairSync } from "node:crypto";
import { describe, expect, it } from "vitest";
import { classifyGceError, gceErrorAnswer } from "../../../shims/gce/errors.ts";
import { labelValue, parseExtraSpecs } from "../../../shims/gce/extra-specs.ts";
import { insertBody } from "../../../shims/gce/instance-body.ts";
import { launchPlan, ruledOut } from "../../../shims/gce/launch-plan.ts";
import { signAssertion } from "../../../shims/gce/token.ts";

const specs = (raw: unknown) => {
  const s = parseExtraSpecs(raw);
  if (!s.ok) throw new Error(s.problems.join("; "));
  return s.specs;
};

describe("launch plan", () => {
  it("Spot in every zone first, then standard; standard alone by default", () => {
    const zones = ["us-central1-a", "us-central1-b"];
    expect(launchPlan(zones, specs({ capacity: "spot-with-fallback" }))).toEqual([
      { zone: "us-central1-a", model: "SPOT" },
      { zone: "us-central1-b", model: "SPOT" },
      { zone: "us-central1-a", model: "STANDARD" },
      { zone: "us-central1-b", model: "STANDARD" },
    ]);
    expect(launchPlan(zones, specs({})).map((a) => a.model)).toEqual(["STANDARD", "STANDARD"]);
  });

  it("a quota error rules out the region's other zones for that model only; exhaustion only its zone", () => {
    const quota = [{ attempt: { zone: "us-central1-a", model: "SPOT" as const }, code: "QUOTA_EXCEEDED" }];
    expect(ruledOut({ zone: "us-central1-b", model: "SPOT" }, quota)).toBe(true);
    expect(ruledOut({ zone: "us-central1-b", model: "STANDARD" }, quota)).toBe(false);
    expect(ruledOut({ zone: "europe-west1-b", model: "SPOT" }, quota)).toBe(false);
    const exhausted = [{ attempt: { zone: "us-central1-a", model: "SPOT" as const }, code: "ZONE_RESOURCE_POOL_EXHAUSTED" }];
    expect(ruledOut({ zone: "us-central1-b", model: "SPOT" }, exhausted)).toBe(false);
  });
});

describe("errors", () => {
  const e = (status: number, reason: string, method = "compute.instances.get") => ({ status, reason, message: "m", method });
  it("classifies as the EC2 shim does", () => {
    expect(classifyGceError(e(403, "rateLimitExceeded"))).toBe("throttled");
    expect(classifyGceError(e(400, "resourceNotReady"))).toBe("changing");
    expect(classifyGceError(e(429, "RESOURCE_EXHAUSTED"))).toBe("throttled");
    expect(classifyGceError(e(403, "quotaExceeded", "compute.instances.insert"))).toBe("capacity");
    expect(classifyGceError(e(403, "forbidden"))).toBe("not_allowed");
    expect(classifyGceError(e(401, "authError"))).toBe("credentials");
    expect(classifyGceError(e(400, "invalid_grant", "oauth2.token"))).toBe("credentials");
    expect(classifyGceError(e(503, "unavailable", "oauth2.token"))).toBe("server");
    expect(classifyGceError(e(404, "notFound"))).toBe("not_found");
    expect(classifyGceError(e(404, "notFound", "compute.instances.insert"))).toBe("refused");
    expect(classifyGceError(e(400, "invalid", "compute.instances.insert"))).toBe("refused");
    expect(classifyGceError(e(0, "NetworkError"))).toBe("server");
  });

  it("a missing permission names the permissions and where the role is", () => {
    const a = gceErrorAnswer(e(403, "forbidden", "compute.instances.aggregatedList"));
    expect(a.status).toBe(403);
    expect((a.body as { error: string }).error).toMatch(/needs compute.instances.list .*docs\/gce-shim.md/);
  });
});

describe("labels and extra_specs", () => {
  it("a UUID is its own label value; anything else becomes a valid, stable one", async () => {
    expect(await labelValue("0f0c2a4e-8a4b-4f6e-9d55-2b8c1b1f5b1e")).toBe("0f0c2a4e-8a4b-4f6e-9d55-2b8c1b1f5b1e");
    const odd = await labelValue("Org/Pool With Spaces and a name far longer than sixty-three characters in all");
    expect(odd).toMatch(/^[a-z0-9_-]{1,63}$/);
    expect(await labelValue("Org/Pool With Spaces and a name far longer than sixty-three characters in all")).toBe(odd);
    expect(await labelValue("A")).not.toBe(await labelValue("a"));
  });

  it("unknown keys are named, with ours for GARM's names", () => {
    expect(parseExtraSpecs({ zone: "x", foo: 1 })).toEqual({
      ok: false,
      problems: [
        "extra_specs.zone: unknown key; the GCE shim calls it zones",
        expect.stringMatching(/^extra_specs.foo: unknown key \(known keys: zones, capacity/),
      ],
    });
    expect(parseExtraSpecs({ scopes: ["https://www.googleapis.com/auth/devstorage.read_only"] })).toEqual({
      ok: false,
      problems: ["extra_specs.scopes: only with service_account"],
    });
  });
});

describe("insert body", () => {
  it("zone-relative machine type and disk type, the region's subnetwork, Spot deleted on preemption, our labels last", () => {
    const body = insertBody({
      name: "r-1",
      zone: "europe-west1-b",
      machineType: "n2-standard-4",
      image: "projects/debian-cloud/global/images/family/debian-12",
      specs: specs({ subnetwork: "runners", disk_type: "pd-balanced", disk_size_gb: 40, external_ip: false, labels: { team: "ci" } }),
      poolLabel: "p",
      controllerLabel: "c",
      startupScript: "#!/bin/bash\n",
      model: "SPOT",
    });
    expect(body).toMatchObject({
      machineType: "zones/europe-west1-b/machineTypes/n2-standard-4",
      labels: { team: "ci", "edgerunner-controller-id": "c", "edgerunner-pool-id": "p" },
      disks: [
        { boot: true, autoDelete: true, initializeParams: { diskSizeGb: "40", diskType: "zones/europe-west1-b/diskTypes/pd-balanced" } },
      ],
      networkInterfaces: [{ subnetwork: "regions/europe-west1/subnetworks/runners" }],
      scheduling: { provisioningModel: "SPOT", instanceTerminationAction: "DELETE" },
      metadata: { items: [{ key: "startup-script", value: "#!/bin/bash\n" }] },
    });
    expect(body.networkInterfaces[0].accessConfigs).toBeUndefined();
    expect(body.serviceAccounts).toBeUndefined();
  });
});

describe("the token's assertion", () => {
  it("is an RS256 JWT over iss, scope, aud = token_uri, iat and exp an hour later, signed with the key", async () => {
    const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
    const account = {
      clientEmail: "shim@p.iam.gserviceaccount.com",
      privateKeyPem: privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
      privateKeyId: "kid-1",
      tokenUri: "https://oauth2.googleapis.com/token",
      projectId: "p",
    };
    const jwt = await signAssertion(account, "https://www.googleapis.com/auth/compute", 1_700_000_000);
    const [h, p, s] = jwt.split(".") as [string, string, string];
    expect(JSON.parse(Buffer.from(h, "base64url").toString())).toEqual({ alg: "RS256", typ: "JWT", kid: "kid-1" });
    expect(JSON.parse(Buffer.from(p, "base64url").toString())).toEqual({
      iss: "shim@p.iam.gserviceaccount.com",
      scope: "https://www.googleapis.com/auth/compute",
      aud: "https://oauth2.googleapis.com/token",
      iat: 1_700_000_000,
      exp: 1_700_003_600,
    });
    const v = createVerify("RSA-SHA256");
    v.update(`${h}.${p}`);
    expect(v.verify(createPublicKey(publicKey.export({ type: "spki", format: "pem" })), Buffer.from(s, "base64url"))).toBe(true);
  });
});

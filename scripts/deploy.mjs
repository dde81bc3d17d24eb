// `npm run deploy` (the coordinator: D1 migrations, then deploy), `npm run deploy:shim:aws-ec2`,
// `npm run deploy:shim:gce`, `npm run deploy:shim:hetzner`
// and `npm run db:migrate:remote` (`--migrate-only`). When `edgerunner setup` has run, they use
// the deploy config it wrote (wrangler.deploy.toml: this account's D1 database and PUBLIC_URL),
// regenerated from the committed wrangler.toml first so a change to that file goes out too (one
// written by hand is used as it is); otherwise the committed file itself. See docs/deploy.md.
import { spawnSync } from "node:child_process";
import {
  AWS_EC2_SHIM,
  COORDINATOR,
  committedConfig,
  GCE_SHIM,
  HETZNER_SHIM,
  refreshDeployConfig,
} from "../cli/src/setup/deploy-config-file.ts";

const args = process.argv.slice(2);
const shims = { "aws-ec2": AWS_EC2_SHIM, gce: GCE_SHIM, hetzner: HETZNER_SHIM };
const target = shims[args.find((a) => a in shims)] ?? COORDINATOR;
// npm runs scripts in the package's root: the checkout.
const root = process.cwd();
const config = refreshDeployConfig(root, target) ?? committedConfig(target);
if (config !== committedConfig(target))
  console.log(`→ ${config}, regenerated from ${committedConfig(target)} with the settings edgerunner setup chose`);

const wrangler = (list) => {
  const r = spawnSync("wrangler", list, { cwd: root, stdio: "inherit" });
  if (r.error) throw r.error;
  if (r.status !== 0) process.exit(r.status ?? 1);
};
if (target === COORDINATOR) wrangler(["d1", "migrations", "apply", "DB", "--remote", "-c", config]);
if (!args.includes("--migrate-only")) wrangler(["deploy", "-c", config]);

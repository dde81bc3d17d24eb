/**
 * Runs the fake EC2 on its own:
 *
 *   npm run fake-ec2 -- [--port 8791] [--region us-east-1]
 *
 * Prints one JSON line with its URL and an account (access key, secret key, region) to give a
 * shim as its AWS credentials, with EC2_ENDPOINT set to the URL. Stops on SIGINT/SIGTERM.
 */
import { parseArgs } from "node:util";
import { startFakeEc2 } from "./server.ts";

const { values } = parseArgs({ options: { port: { type: "string" }, region: { type: "string" } } });
const ec2 = await startFakeEc2({ port: values.port ? Number(values.port) : 0, region: values.region });
console.log(JSON.stringify({ event: "fake_ec2_started", url: ec2.url, account: ec2.account }));
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => void ec2.stop().then(() => process.exit(0)));

import { answer, type ShimAnswer } from "../common/shim-worker.ts";
import type { Ec2Error } from "./ec2-api.ts";

/**
 * How an EC2 failure is answered to the coordinator (docs/provider-shim-protocol.md, Errors):
 * the status decides whether it retries (408/429/5xx) or gives up (other 4xx), the message is
 * what a person reads on the instance. Pure.
 */

export { answer, type ShimAnswer };

const NOT_FOUND = new Set(["InvalidInstanceID.NotFound", "InvalidInstanceID.Malformed"]);
const THROTTLED = new Set(["RequestLimitExceeded", "Throttling", "ThrottlingException", "RequestThrottled"]);
const BAD_CREDENTIALS = new Set([
  "AuthFailure",
  "InvalidClientTokenId",
  "SignatureDoesNotMatch",
  "MissingAuthenticationToken",
  "IncompleteSignature",
  "RequestExpired",
  "ExpiredToken",
]);
const NOT_ALLOWED = new Set(["UnauthorizedOperation", "AccessDenied", "OptInRequired", "Blocked", "PendingVerification"]);
const WRONG_STATE = new Set(["IncorrectInstanceState", "IncorrectState"]);

/** The IAM permissions each call needs, for the message when one is missing. */
const IAM_ACTIONS: Record<string, string> = {
  RunInstances: "ec2:RunInstances and ec2:CreateTags (tags at launch)",
  DescribeInstances: "ec2:DescribeInstances",
  DescribeImages: "ec2:DescribeImages",
  DescribeInstanceTypes: "ec2:DescribeInstanceTypes",
  TerminateInstances: "ec2:TerminateInstances",
  StartInstances: "ec2:StartInstances",
  StopInstances: "ec2:StopInstances",
};

export type Ec2ErrorClass = "not_found" | "throttled" | "credentials" | "not_allowed" | "wrong_state" | "server" | "refused";

export function classifyEc2Error(e: Ec2Error): Ec2ErrorClass {
  if (NOT_FOUND.has(e.code)) return "not_found";
  if (THROTTLED.has(e.code)) return "throttled";
  if (BAD_CREDENTIALS.has(e.code)) return "credentials";
  if (NOT_ALLOWED.has(e.code)) return "not_allowed";
  if (WRONG_STATE.has(e.code)) return "wrong_state";
  if (e.status === 0 || e.status >= 500) return "server";
  return "refused";
}

// The coordinator keeps the first 512 characters of an error: EC2's own message comes first, cut short.
const said = (e: Ec2Error) => `${e.code}: ${e.message.length > 240 ? `${e.message.slice(0, 240)}…` : e.message}`;

/**
 * The answer for a failed EC2 call. `context` leads the message (e.g. what the create tried).
 * Throttling and EC2-side failures are retryable (503/502); credentials and permissions are
 * permanent (403) with what to fix; an unknown instance is 404; EC2 refusing the parameters
 * (bad AMI, subnet, …) is permanent (422).
 */
export function ec2ErrorAnswer(action: string, e: Ec2Error, context = ""): ShimAnswer {
  const lead = context ? `${context}: ` : "";
  switch (classifyEc2Error(e)) {
    case "not_found":
      return answer(404, { error: `${lead}no such instance (${e.code})` });
    case "throttled":
      return answer(
        503,
        { error: `${lead}EC2 is throttling the account's API calls (${e.code}); try again later` },
        { "retry-after": "5" },
      );
    case "credentials":
      return answer(403, {
        error: `${lead}EC2 refused the shim's AWS credentials on ${action} (${said(e)}); check the Worker's AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN and AWS_REGION`,
      });
    case "not_allowed":
      return answer(403, {
        error: `${lead}the shim's IAM identity may not call ${action} (${said(e)}); it needs ${IAM_ACTIONS[action] ?? `ec2:${action}`} (docs/aws-ec2-shim.md has the policy)`,
      });
    case "wrong_state":
      return answer(
        503,
        { error: `${lead}the instance cannot do that in its current state (${said(e)}); try again later` },
        { "retry-after": "5" },
      );
    case "server":
      return answer(502, { error: `${lead}EC2 failed on ${action} (${said(e)})` });
    case "refused":
      return answer(422, { error: `${lead}EC2 refused ${action} (${said(e)})` });
  }
}

import { describe, expect, it } from "vitest";
import { parseError } from "../../../shims/aws-ec2/ec2-xml";
import { ec2ErrorAnswer } from "../../../shims/aws-ec2/errors";
import { classifyShimStatus } from "../../../src/providers/shim-errors";

const e = (code: string, status: number, message = "EC2 said so") => ({ code, status, message });

describe("EC2 errors as the coordinator reads them", () => {
  it.each([
    ["InvalidInstanceID.NotFound", 400, 404, "not_found"],
    ["RequestLimitExceeded", 503, 503, "retryable"],
    ["AuthFailure", 401, 403, "permanent"],
    ["UnauthorizedOperation", 403, 403, "permanent"],
    ["OptInRequired", 401, 403, "permanent"],
    ["IncorrectInstanceState", 400, 503, "retryable"],
    ["InternalError", 500, 502, "retryable"],
    ["NetworkError", 0, 502, "retryable"],
    ["InvalidAMIID.NotFound", 400, 422, "permanent"],
    ["InvalidParameterValue", 400, 422, "permanent"],
  ])("%s (EC2 %i) → %i, %s", (code, status, expected, kind) => {
    const a = ec2ErrorAnswer("RunInstances", e(code, status));
    expect(a.status).toBe(expected);
    expect(classifyShimStatus(a.status)).toBe(kind);
  });

  it("keeps EC2's message short enough for the coordinator's 512 characters", () => {
    const a = ec2ErrorAnswer("TerminateInstances", e("InvalidParameterValue", 400, "x".repeat(2000)), "cannot delete y");
    expect((a.body as { error: string }).error.length).toBeLessThan(400);
  });

  it("reads EC2's error document, and nothing else", () => {
    expect(
      parseError(
        '<?xml version="1.0"?><Response><Errors><Error><Code>Blocked</Code><Message>Your account is blocked</Message></Error></Errors><RequestID>r-1</RequestID></Response>',
      ),
    ).toEqual({
      code: "Blocked",
      message: "Your account is blocked",
      requestId: "r-1",
    });
    expect(parseError("<html><body>Bad gateway</body></html>")).toBeNull();
    expect(parseError("not xml at all <")).toBeNull();
  });
});

/**
 * The fake EC2's own rules, beyond what AWS's SDK exercises in test/contract/ec2-sdk.test.ts:
 * SigV4 refusals (tampered body, unsigned headers, clock skew), query-string requests, and
 * DescribeInstances and DescribeInstanceTypes paging.
 */
import { AwsV4Signer } from "aws4fetch";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseError } from "../../../shims/aws-ec2/ec2-xml.ts";
import { createAccount, type FakeEc2Account } from "../../fake-ec2/control.ts";
import { type FakeEc2, startFakeEc2 } from "../../fake-ec2/server.ts";

let fake: FakeEc2;
let account: FakeEc2Account;
beforeAll(async () => {
  fake = await startFakeEc2();
  account = await createAccount(fake.url);
});
afterAll(() => fake?.stop());

async function signed(opts: { body?: string; url?: string; datetime?: string; headers?: Record<string, string> } = {}) {
  const signer = new AwsV4Signer({
    method: opts.body === undefined ? "GET" : "POST",
    url: opts.url ?? `${fake.url}/`,
    headers: { "content-type": "application/x-www-form-urlencoded", ...opts.headers },
    body: opts.body,
    accessKeyId: account.access_key_id,
    secretAccessKey: account.secret_access_key,
    service: "ec2",
    region: account.region,
    datetime: opts.datetime,
  });
  return signer.sign();
}

const send = async (r: { method: string; url: URL; headers: Headers; body?: unknown }, body?: string) => {
  const res = await fetch(r.url, { method: r.method, headers: r.headers, body });
  return { status: res.status, error: parseError(await res.text()) };
};

describe("SigV4 refusals", () => {
  const body = "Action=DescribeInstances&Version=2016-11-15";

  it("the signed request passes; the same signature over another body does not", async () => {
    const r = await signed({ body });
    expect((await send(r, body)).status).toBe(200);
    expect(await send(r, body + "&MaxResults=5")).toMatchObject({ status: 401, error: { code: "AuthFailure" } });
  });

  it("a header that was not signed may not be swapped for one that was", async () => {
    const r = await signed({ body, headers: { "x-amz-target": "a" } });
    r.headers.set("x-amz-target", "b");
    expect(await send(r, body)).toMatchObject({ status: 401, error: { code: "AuthFailure" } });
  });

  it("no Authorization header, or one of another scheme", async () => {
    expect(
      await send(
        { method: "POST", url: new URL(fake.url), headers: new Headers({ "content-type": "application/x-www-form-urlencoded" }) },
        body,
      ),
    ).toMatchObject({
      status: 401,
      error: { code: "MissingAuthenticationToken" },
    });
    expect(
      await send({ method: "POST", url: new URL(fake.url), headers: new Headers({ authorization: "AWS AKIA:abc" }) }, body),
    ).toMatchObject({ status: 400, error: { code: "IncompleteSignature" } });
  });

  it("signed more than 15 minutes ago: RequestExpired", async () => {
    const old = new Date(Date.now() - 16 * 60 * 1000).toISOString().replace(/[:-]|\.\d{3}/g, "");
    expect(await send(await signed({ body, datetime: old }), body)).toMatchObject({ status: 400, error: { code: "RequestExpired" } });
  });

  it("a GET with the parameters in the query string verifies (canonical query order)", async () => {
    const r = await signed({
      url: `${fake.url}/?Version=2016-11-15&Action=DescribeInstances&Filter.1.Name=tag%3AName&Filter.1.Value.1=a%20b*`,
    });
    expect((await send(r)).status).toBe(200);
    expect((await account.requests()).at(-1)).toMatchObject({
      action: "DescribeInstances",
      params: { "Filter.1.Name": "tag:Name", "Filter.1.Value.1": "a b*" },
      status: 200,
    });
  });
});

describe("DescribeInstances paging", () => {
  it("MaxResults out of range, ids with MaxResults, and a token from another query are refused", async () => {
    const call = async (q: string) =>
      send(await signed({ body: `Action=DescribeInstances&Version=2016-11-15&${q}` }), `Action=DescribeInstances&Version=2016-11-15&${q}`);
    expect(await call("MaxResults=4")).toMatchObject({ status: 400, error: { code: "InvalidParameterValue" } });
    expect(await call("MaxResults=5&InstanceId.1=i-0123456789abcdef0")).toMatchObject({
      status: 400,
      error: { code: "InvalidParameterCombination" },
    });
    expect(await call("MaxResults=5&NextToken=bm9wZTox")).toMatchObject({ status: 400, error: { code: "InvalidParameterValue" } });
  });
});

describe("DescribeInstanceTypes paging", () => {
  const call = async (q: string) =>
    send(
      await signed({ body: `Action=DescribeInstanceTypes&Version=2016-11-15&${q}` }),
      `Action=DescribeInstanceTypes&Version=2016-11-15&${q}`,
    );

  it("a page of the account's size, a token that carries on, and a token from another query refused", async () => {
    const first = await fetchTypes("MaxResults=100&Filter.1.Name=current-generation&Filter.1.Value.1=true");
    expect(first.names).toHaveLength(5);
    const second = await fetchTypes(`MaxResults=100&Filter.1.Name=current-generation&Filter.1.Value.1=true&NextToken=${first.next}`);
    expect(second.names.filter((n) => first.names.includes(n))).toEqual([]);
    expect(await call(`MaxResults=100&NextToken=${first.next}`)).toMatchObject({ status: 400, error: { code: "InvalidParameterValue" } });
  });

  async function fetchTypes(q: string) {
    const body = `Action=DescribeInstanceTypes&Version=2016-11-15&${q}`;
    const r = await signed({ body });
    const res = await fetch(r.url, { method: r.method, headers: r.headers, body });
    const text = await res.text();
    return {
      names: [...text.matchAll(/<item><instanceType>([^<]+)<\/instanceType>/g)].map((m) => m[1]!),
      next: /<nextToken>([^<]+)<\/nextToken>/.exec(text)?.[1],
    };
  }
});

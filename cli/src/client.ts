/**
 * The admin API client: openapi-fetch over the paths of cli/api-types.ts (generated from the
 * coordinator's OpenAPI document), with the token, and failures turned into ApiFailure or
 * NetworkFailure.
 */
import createClient from "openapi-fetch";
import type { paths } from "./api-types.ts";
import type { AccessServiceToken } from "./config.ts";
import { ApiFailure, NetworkFailure, toErrorBody } from "./errors.ts";

export type ApiClient = ReturnType<typeof createClient<paths>>;

export function makeClient(url: string, token: string | undefined, fetchImpl?: typeof fetch, access?: AccessServiceToken): ApiClient {
  const client = createClient<paths>({
    baseUrl: url,
    headers: {
      "user-agent": "edgerunner-cli",
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(access ? { "cf-access-client-id": access.clientId, "cf-access-client-secret": access.clientSecret } : {}),
    },
    ...(fetchImpl ? { fetch: fetchImpl } : {}),
  });
  // A request that gets no HTTP answer: the URL it was for, and the cause (ECONNREFUSED, ...).
  client.use({
    onError({ request, error }) {
      return new NetworkFailure(new URL(request.url).origin, error);
    },
  });
  return client;
}

/** The data of a successful answer; an error answer throws ApiFailure with the API's body. */
export async function unwrap<T>(pending: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await pending;
  if (!response.ok)
    throw new ApiFailure(response.status, toErrorBody(response.status, error, typeof error === "string" ? error : undefined));
  return data as T;
}

/**
 * Whether a URL's hostname (as `new URL(…).hostname` gives it: lower case, IPv4 shorthand such
 * as `127.1` already spelled out, IPv6 in brackets) names this machine: 127.0.0.0/8, ::1 or
 * localhost. Plain http:// is allowed only there, where nothing on the network can read it
 * (development, and the tests' fake GitHub).
 */
export function isLoopbackHost(hostname: string): boolean {
  const h = hostname.toLowerCase().replace(/\.$/, "");
  if (h === "localhost" || h === "[::1]") return true;
  const m = /^127\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(h);
  return m?.slice(1).every((octet) => Number(octet) <= 255) ?? false;
}

// D63, issue 39 item 2: which hosts a webhook may reach. Not this machine nor
// its networks (loopback, link-local, private, unspecified, carrier-grade NAT,
// in any IPv6 form of them), nor a name of localhost, unless an operator
// allows the host: otherwise the delivery log (status, answer, error) would
// let a BackOffice key scan the inside. Registration judges the URL's host;
// each delivery also judges every address the host resolves to then (DNS
// rebinding). node:net's BlockList does the CIDR matching, and matches the
// IPv4-mapped form (::ffff:a.b.c.d) of each IPv4 range by itself.
import { BlockList, isIP } from "node:net";

export const ALLOW_SETTING = "MERIDIAN_WEBHOOK_HOSTS";

const V4_RANGES: [kind: string, subnet: string, prefix: number][] = [
  ["unspecified", "0.0.0.0", 8],
  ["loopback", "127.0.0.0", 8],
  ["private", "10.0.0.0", 8],
  ["private", "172.16.0.0", 12],
  ["private", "192.168.0.0", 16],
  ["link-local", "169.254.0.0", 16],
  ["carrier-grade NAT", "100.64.0.0", 10],
];
const V6_RANGES: [kind: string, subnet: string, prefix: number][] = [
  ["unspecified", "::", 128],
  ["loopback", "::1", 128],
  ["private", "fc00::", 7], // unique local (RFC 4193)
  ["link-local", "fe80::", 10],
];

// Checked in this order: ::1 is also the IPv4-compatible form of 0.0.0.1.
const KINDS = ["loopback", "unspecified", "private", "link-local", "carrier-grade NAT"].map((kind) => {
  const list = new BlockList();
  for (const [k, subnet, prefix] of V4_RANGES) {
    if (k !== kind) continue;
    list.addSubnet(subnet, prefix, "ipv4");
    // The IPv4-compatible (::a.b.c.d) and NAT64 (64:ff9b::a.b.c.d, RFC 6052) forms reach the same host.
    list.addSubnet(`::${subnet}`, 96 + prefix, "ipv6");
    list.addSubnet(`64:ff9b::${subnet}`, 96 + prefix, "ipv6");
  }
  for (const [k, subnet, prefix] of V6_RANGES) if (k === kind) list.addSubnet(subnet, prefix, "ipv6");
  return { kind, list };
});

/** What kind of internal address `address` is (an IP address), or undefined for one a webhook may reach. */
export function internalAddressKind(address: string): string | undefined {
  const ip = address.replace(/%.*$/, ""); // a zone id (fe80::1%eth0) is not part of the address
  const family = isIP(ip);
  if (family === 0) return undefined;
  return KINDS.find((k) => k.list.check(ip, family === 6 ? "ipv6" : "ipv4"))?.kind;
}

/** A host as the allow lists and the rule compare it: lower case, no IPv6 brackets, no final dot. */
export function normalHost(host: string): string {
  return host
    .toLowerCase()
    .replace(/^\[|\]$/g, "")
    .replace(/\.$/, "");
}

/** The operator's allowances: MERIDIAN_WEBHOOK_HOSTS, and MERIDIAN_WEBHOOK_HTTP_HOSTS (which also allows http:). */
export class WebhookHosts {
  private readonly allowed: ReadonlySet<string>;
  private readonly http: ReadonlySet<string>;

  constructor(opts: { hosts?: readonly string[]; httpHosts?: readonly string[] }) {
    this.http = new Set((opts.httpHosts ?? []).map(normalHost));
    this.allowed = new Set([...(opts.hosts ?? []).map(normalHost), ...this.http]);
  }

  mayUseHttp(host: string): boolean {
    return this.http.has(normalHost(host));
  }

  allows(host: string): boolean {
    return this.allowed.has(normalHost(host));
  }

  /** Why a URL's host may not be reached, judged without resolving it: a name of localhost, or an internal address. */
  refuseHost(host: string): string | undefined {
    const h = normalHost(host);
    if (this.allowed.has(h)) return undefined;
    if (h === "localhost" || h.endsWith(".localhost")) return `${h} names this machine; allow the host in ${ALLOW_SETTING}`;
    return this.refuseAddress(h, h);
  }

  /** Why `host` may not be reached at `address`, one it resolved to (or its own, when it is an address). */
  refuseAddress(host: string, address: string): string | undefined {
    if (this.allowed.has(normalHost(host))) return undefined;
    const kind = internalAddressKind(address);
    return kind && `address ${address} is ${kind}; allow the host in ${ALLOW_SETTING}`;
  }
}

// D63, issue 39 item 2: the connections a delivery is sent on. The host is
// resolved when the connection is made and every address it gave is judged
// there, so the address checked is the address connected to: a name that
// passed registration and resolves inside later (DNS rebinding) is refused.
// undici, because Node's fetch is undici and its Agent lets a lookup of our
// own be used (connect.lookup); an address literal is never looked up, so
// the delivery judges it before it connects (WebhookHosts.refuseHost).
import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import type { LookupFunction } from "node:net";
import { Agent } from "undici";
import type { WebhookHosts } from "./webhook-addresses.js";

/** Why a delivery did not connect: the address the host resolved to is internal. */
export class RefusedAddress extends Error {
  readonly code = "EWEBHOOKADDRESS";
}

export function guardedLookup(hosts: WebhookHosts): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
      if (err) return callback(err, "", 0);
      if (addresses.length === 0) return callback(Object.assign(new Error(`${hostname} has no address`), { code: "ENOTFOUND" }), "", 0);
      // Every address, not only the one tried first: a connection may fall back to any of them.
      for (const a of addresses) {
        const why = hosts.refuseAddress(hostname, a.address);
        if (why) return callback(new RefusedAddress(why), "", 0);
      }
      if (options.all) return (callback as (e: null, a: LookupAddress[]) => void)(null, addresses);
      callback(null, addresses[0].address, addresses[0].family);
    });
  };
}

/** The dispatcher deliveries are fetched with. */
export function guardedAgent(hosts: WebhookHosts): Agent {
  return new Agent({ connect: { lookup: guardedLookup(hosts) } });
}

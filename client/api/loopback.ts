// What counts as this machine: the API's own address (dev mode may listen only there) and a
// caller's (a Prometheus scrape from here needs no token). 127.0.0.0/8 and ::1, in any of
// their spellings, IPv4-mapped IPv6 included.
import { BlockList, isIP } from 'node:net';

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/** Whether `address` (an IP address, as a socket reports it) is a loopback address. */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (address === undefined) return false;
  const family = isIP(address);
  return family !== 0 && LOOPBACK.check(address, family === 6 ? 'ipv6' : 'ipv4');
}

/** Whether API_HOST only accepts connections from this machine: `localhost` or a loopback address (`[::1]` too). */
export function isLoopbackHost(host: string): boolean {
  const h = host
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1');
  return h === 'localhost' || isLoopbackAddress(h);
}

import { BlockList, isIP } from 'node:net'
import type { GatehouseConfig } from '../config/schema.js'
import { rateLimitIdentity } from '../core/rate-limit.js'

const normalize = (ip: string): string => (ip.startsWith('::ffff:') && isIP(ip.slice(7)) === 4 ? ip.slice(7) : ip)

const proxyLists = new WeakMap<readonly string[], BlockList>()
function proxyList(entries: readonly string[]): BlockList {
  let list = proxyLists.get(entries)
  if (!list) {
    list = new BlockList()
    for (const entry of entries) {
      const [address, bits] = entry.split('/')
      const family = isIP(address ?? '')
      if (!address || !family) continue
      const type = family === 6 ? 'ipv6' : 'ipv4'
      if (bits !== undefined) list.addSubnet(address, Number(bits), type)
      else list.addAddress(address, type)
    }
    proxyLists.set(entries, list)
  }
  return list
}

/**
 * The client's address: the first valid entry of the configured forwarding headers when the
 * direct peer is a trusted proxy (default: loopback), otherwise the peer itself.
 */
export function clientIp(peer: string | undefined, headers: Headers, conf: GatehouseConfig['advanced']['ipAddress']): string | null {
  const direct = peer ? normalize(peer) : null
  // The forwarded address first: the proxy list is consulted only when there is one (BlockList's
  // check builds a SocketAddress each call, a measurable cost on every request).
  for (const name of conf.ipAddressHeaders) {
    const value = headers.get(name)
    if (!value) continue
    const first = normalize(value.split(',')[0]?.trim() ?? '')
    if (isIP(first)) return direct === null || isTrustedProxy(direct, conf.trustedProxies) ? first : direct
  }
  return direct
}

/** Whether a peer address is one of `trustedProxies` (addresses and CIDR ranges). */
export function isTrustedProxy(peer: string, trustedProxies: readonly string[]): boolean {
  const direct = normalize(peer)
  const family = isIP(direct)
  return family !== 0 && proxyList(trustedProxies).check(direct, family === 6 ? 'ipv6' : 'ipv4')
}

/** The rate-limit identity of an address (IPv6 grouped per /64): core/rate-limit.ts's, one rule for every face. */
export { rateLimitIdentity }

/**
 * The network an address belongs to, as a person's devices are told apart (the account feature's
 * sign-in notices): an IPv4 address's /24, an IPv6 address's /64; anything else as it is.
 */
export function networkOf(ip: string | null): string {
  if (!ip) return ''
  const address = normalize(ip)
  if (isIP(address) === 4) return `${address.split('.').slice(0, 3).join('.')}.0/24`
  return rateLimitIdentity(address)
}

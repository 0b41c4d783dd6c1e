import { createServer } from 'node:net'
import { hostname, networkInterfaces } from 'node:os'

/**
 * What the Network section reads from the machine. `system` is the one seam: tests replace its
 * functions to describe a machine (and bind loopback addresses only).
 */
export const system = {
  interfaces: networkInterfaces,
  hostname,
}

export interface LanAddress {
  interface: string
  address: string
  family: 'IPv4' | 'IPv6'
  internal: boolean
}

/** Every address of every interface, LAN ones first, link-local IPv6 left out. */
export function lanAddresses(): LanAddress[] {
  const out: LanAddress[] = []
  for (const [name, list] of Object.entries(system.interfaces())) {
    for (const a of list ?? []) {
      if (a.family === 'IPv6' && a.address.toLowerCase().startsWith('fe80')) continue
      out.push({ interface: name, address: a.address, family: a.family === 'IPv6' ? 'IPv6' : 'IPv4', internal: a.internal })
    }
  }
  return out.sort((a, b) => Number(a.internal) - Number(b.internal) || (a.family === b.family ? 0 : a.family === 'IPv4' ? -1 : 1))
}

export interface BaseURLProposal {
  url: string
  /** address: a LAN IPv4 address of this machine; hostname: its host name (mDNS / DNS). */
  source: 'address' | 'hostname'
  interface?: string
}

/** Base URLs apps on the LAN can use: each LAN IPv4 address, then the host name. */
export function proposeBaseURLs(port: number, onlyInterface?: string | null): BaseURLProposal[] {
  const out: BaseURLProposal[] = []
  for (const a of lanAddresses()) {
    if (a.internal || a.family !== 'IPv4') continue
    if (onlyInterface && a.interface !== onlyInterface) continue
    out.push({ url: `http://${a.address}:${port}`, source: 'address', interface: a.interface })
  }
  const name = system.hostname().trim()
  if (name && name !== 'localhost') {
    const host = name.includes('.') ? name : `${name}.local`
    out.push({ url: `http://${host.toLowerCase()}:${port}`, source: 'hostname' })
  }
  return out
}

/** Whether host:port can be bound now (a probe listener, closed at once). */
export function portIsFree(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer()
    probe.once('error', () => resolve(false))
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve(true)))
  })
}

/** The first free port after `port` on host (up to 100 tried), or null. */
export async function nextFreePort(host: string, port: number): Promise<number | null> {
  for (let candidate = port + 1; candidate <= Math.min(65535, port + 100); candidate++) {
    if (await portIsFree(host, candidate)) return candidate
  }
  return null
}

export interface Reachability {
  url: string
  reachable: boolean
  /** HTTP status of GET <base URL><base path>/ok, when an answer came. */
  status: number | null
  message: string
}

/** GET <base URL><base path>/ok from this machine, as an app on the LAN would call it. */
export async function checkReachable(baseURL: string, basePath: string, timeoutMs = 4000): Promise<Reachability> {
  const url = `${baseURL.replace(/\/+$/, '')}${basePath}/ok`
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs), redirect: 'manual' })
    const body = (await response.json().catch(() => null)) as { ok?: unknown } | null
    const reachable = response.status === 200 && body?.ok === true
    return {
      url,
      reachable,
      status: response.status,
      message: reachable ? 'Gatehouse answered at this address' : `Something answered with HTTP ${response.status}, not this Gatehouse`,
    }
  } catch (e) {
    const cause = (e as { cause?: { code?: string } }).cause?.code ?? (e as Error).name
    return { url, reachable: false, status: null, message: `No answer from this machine (${cause})` }
  }
}

import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { readNetworkSettings, resolveNetwork, writeNetworkSettings } from '../../../server/features/network/settings.js'
import { proposeBaseURLs, system } from '../../../server/features/network/system.js'

const realSystem = { ...system }
afterEach(() => Object.assign(system, realSystem))

/** A machine with a LAN interface (never bound here: these are pure resolutions). */
function machine(host = 'Office-PC') {
  system.hostname = () => host
  system.interfaces = () => ({
    lo: [{ address: '127.0.0.1', netmask: '255.0.0.0', family: 'IPv4', mac: '00:00:00:00:00:00', internal: true, cidr: '127.0.0.1/8' }],
    eth0: [
      {
        address: 'fe80::1',
        netmask: 'ffff:ffff:ffff:ffff::',
        family: 'IPv6',
        mac: '02:00:00:00:00:01',
        internal: false,
        cidr: 'fe80::1/64',
        scopeid: 2,
      },
      {
        address: '192.168.1.20',
        netmask: '255.255.255.0',
        family: 'IPv4',
        mac: '02:00:00:00:00:01',
        internal: false,
        cidr: '192.168.1.20/24',
      },
    ],
  })
}

describe('network settings', () => {
  it('default to loopback:4280 and round-trip through network.json (0600)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gatehouse-network-'))
    try {
      expect(readNetworkSettings(dir)).toEqual({ listen: 'loopback', interface: null, port: 4280, baseURL: null })
      writeNetworkSettings(dir, { listen: 'lan', interface: 'eth0', port: 4300, baseURL: 'http://office-pc.local:4300' })
      expect(readNetworkSettings(dir)).toEqual({ listen: 'lan', interface: 'eth0', port: 4300, baseURL: 'http://office-pc.local:4300' })
      expect(statSync(join(dir, 'network.json')).mode & 0o777).toBe(0o600)
      writeFileSync(join(dir, 'network.json'), '{"port": 70000}')
      expect(() => readNetworkSettings(dir)).toThrow(/network\.json: port: /)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('resolve the host from the choice; all interfaces without a base URL get the LAN address, never 0.0.0.0', () => {
    machine()
    expect(resolveNetwork({ listen: 'loopback', interface: null, port: 4280, baseURL: null }, {})).toEqual({
      host: '127.0.0.1',
      port: 4280,
    })
    expect(resolveNetwork({ listen: 'lan', interface: 'eth0', port: 4280, baseURL: null }, {})).toEqual({
      host: '192.168.1.20',
      port: 4280,
    })
    expect(resolveNetwork({ listen: 'lan', interface: null, port: 4281, baseURL: null }, {})).toEqual({
      host: '0.0.0.0',
      port: 4281,
      baseURL: 'http://192.168.1.20:4281',
    })
    expect(() => resolveNetwork({ listen: 'lan', interface: 'wlan9', port: 4280, baseURL: null }, {})).toThrow(
      'network: interface "wlan9" has no IPv4 address now (available: eth0, lo)',
    )
  })

  it('start-up overrides win over every stored value', () => {
    machine()
    const stored = { listen: 'lan', interface: 'eth0', port: 4300, baseURL: 'http://x.example:4300' } as const
    expect(
      resolveNetwork(stored, {
        host: { value: '127.0.0.1', source: '--host' },
        port: { value: 5000, source: 'GATEHOUSE_PORT' },
        baseURL: { value: 'https://auth.example.com/', source: '--base-url' },
      }),
    ).toEqual({ host: '127.0.0.1', port: 5000, baseURL: 'https://auth.example.com' })
  })

  it('propose the LAN IPv4 addresses and the host name (.local when it has no domain)', () => {
    machine()
    expect(proposeBaseURLs(4280)).toEqual([
      { url: 'http://192.168.1.20:4280', source: 'address', interface: 'eth0' },
      { url: 'http://office-pc.local:4280', source: 'hostname' },
    ])
    machine('gate.corp.example')
    expect(proposeBaseURLs(4280, 'eth0').map((p) => p.url)).toEqual(['http://192.168.1.20:4280', 'http://gate.corp.example:4280'])
  })
})

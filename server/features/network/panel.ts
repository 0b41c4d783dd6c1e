import type { z } from 'zod'
import type { PanelEnv } from '../../panel-frame/env.js'
import { networkErrors, portTakenMessage } from './errors.js'
import type { networkContract } from './panel-contract.js'
import { networkRuntimeOf } from './runtime.js'
import { ALL_INTERFACES_HOST, LOOPBACK_HOST, type NetworkSettings, readNetworkSettings, writeNetworkSettings } from './settings.js'
import { checkReachable, lanAddresses, nextFreePort, portIsFree, proposeBaseURLs } from './system.js'

type In<K extends keyof typeof networkContract> = z.output<(typeof networkContract)[K]['input']>
type Out<K extends keyof typeof networkContract> = z.input<(typeof networkContract)[K]['output']>

const isTaken = (e: unknown) => (e as NodeJS.ErrnoException)?.code === 'EADDRINUSE' || (e as NodeJS.ErrnoException)?.code === 'EACCES'

export const networkPanel = (env: PanelEnv) => {
  const { gatehouse } = env
  const runtime = () => networkRuntimeOf(gatehouse)
  const stored = (): NetworkSettings => {
    const { dataDir } = runtime()
    return dataDir ? readNetworkSettings(dataDir) : { listen: 'loopback', interface: null, port: 4280, baseURL: null }
  }
  const basePath = () => gatehouse.config.get().basePath
  const originOf = (apiURL: string) => apiURL.slice(0, apiURL.length - basePath().length)

  return {
    'network.get'(): Out<'network.get'> {
      const { overrides, dataDir } = runtime()
      const bound = gatehouse.listening()
      const current = bound ?? { host: LOOPBACK_HOST, port: 0 }
      const settings = stored()
      const str = (o?: { value: string | number; source: string }) => (o ? { value: String(o.value), source: o.source } : undefined)
      return {
        stored: settings,
        current: { host: current.host, port: current.port, apiURL: env.apiURL(), listening: bound !== null },
        overrides: { host: str(overrides.host), port: str(overrides.port), baseURL: str(overrides.baseURL) },
        interfaces: lanAddresses().map((a) => ({ name: a.interface, address: a.address, family: a.family, internal: a.internal })),
        proposals: proposeBaseURLs(overrides.port?.value ?? settings.port, settings.listen === 'lan' ? settings.interface : null),
        canSave: dataDir !== null,
      }
    },

    async 'network.apply'(input: In<'network.apply'>): Promise<Out<'network.apply'>> {
      const { overrides, dataDir } = runtime()
      if (!dataDir) throw networkErrors.noDataDir()
      const before = stored()
      // A value fixed at start-up cannot be changed here: the panel names where it comes from.
      if (overrides.port && input.port !== before.port) throw networkErrors.overridden('The port', overrides.port.source)
      if (overrides.host && (input.listen !== before.listen || input.interface !== before.interface)) {
        throw networkErrors.overridden('The listen address', overrides.host.source)
      }
      if (overrides.baseURL && input.baseURL !== before.baseURL) throw networkErrors.overridden('The base URL', overrides.baseURL.source)

      let host: string
      if (input.listen === 'loopback') host = LOOPBACK_HOST
      else if (input.interface) {
        const found = lanAddresses().find((a) => a.interface === input.interface && a.family === 'IPv4')
        if (!found) throw networkErrors.noInterface(input.interface, [...new Set(lanAddresses().map((a) => a.interface))])
        host = found.address
      } else host = ALL_INTERFACES_HOST
      host = overrides.host?.value ?? host
      const port = overrides.port?.value ?? input.port
      const baseURL =
        overrides.baseURL?.value ?? input.baseURL ?? (host === ALL_INTERFACES_HOST ? (proposeBaseURLs(port)[0]?.url ?? null) : null)

      const previous = gatehouse.listening()
      if (!previous) throw networkErrors.notListening()
      const refused = async (): Promise<Out<'network.apply'>> => ({
        applied: false,
        code: 'PORT_IN_USE',
        message: portTakenMessage(host, port),
        suggestedPort: await nextFreePort(host, port),
      })
      // Another port: probe it before stopping the running listener, so a taken port costs nothing.
      const samePort = previous.port === port
      if (!samePort && !(await portIsFree(host, port))) return refused()

      const previousBase = originOf(env.apiURL())
      await gatehouse.closeListener()
      try {
        await gatehouse.listen({ host, port, baseURL })
      } catch (error) {
        // Back where it was: the API stays reachable at the old address.
        await gatehouse.listen({ host: previous.host, port: previous.port, baseURL: previousBase })
        if (isTaken(error)) return refused()
        throw error
      }
      writeNetworkSettings(dataDir, {
        listen: input.listen,
        interface: input.listen === 'lan' ? input.interface : null,
        port: input.port,
        baseURL: input.baseURL,
      })
      env.logger.info(`API listener moved to ${host}:${port} (${env.apiURL()})`)
      return { applied: true, apiURL: env.apiURL(), host, port }
    },

    'network.check'(input: In<'network.check'>): Promise<Out<'network.check'>> {
      return checkReachable(input.baseURL, basePath())
    },
  }
}

import { statSync } from 'node:fs'
import { panelCaller } from '../../core/panel-caller.js'
import type { HandlerGroup, PanelEnv } from '../../panel-frame/env.js'
import type { contract } from '../contract.js'
import { allowedChanges, callerPermissions } from '../permissions.js'
import { features } from './features.js'

function fileSize(file: string): number {
  let total = 0
  for (const suffix of ['', '-wal']) {
    try {
      total += statSync(`${file}${suffix}`).size
    } catch {}
  }
  return total
}

/** Where the server listens and how it runs (the overview's facts panel; the overview itself is features/overview). */
export const systemHandlers: HandlerGroup<typeof contract, 'server.info'> = (env) => ({
  'server.info'() {
    const apiURL = env.apiURL()
    const url = new URL(apiURL)
    const { sqlite, location } = env.gatehouse.database
    const file = sqlite ? sqlite.name : location
    return {
      apiURL,
      origin: url.origin,
      basePath: env.gatehouse.ctx.config().basePath,
      port: Number(url.port || (url.protocol === 'https:' ? 443 : 80)),
      version: env.version,
      startedAt: env.startedAt,
      uptimeSeconds: Math.floor((Date.now() - env.startedAt) / 1000),
      databaseFile: file,
      databaseBytes: !sqlite || file === ':memory:' ? 0 : fileSize(file),
      mode: env.mode,
      features: features(),
      caller: callerView(env),
    }
  },
})

function callerView(env: PanelEnv) {
  const caller = panelCaller()
  if (!caller) return null
  // What this caller may do, by the rule the dispatcher refuses by (server/panel/permissions.ts).
  const config = env.gatehouse.ctx.config()
  const may = { permissions: callerPermissions(config, caller), changes: allowedChanges(config, caller) }
  if (caller.kind === 'admin') {
    const { user } = caller
    return { kind: caller.kind, name: user.name, email: user.email, role: user.role, access: caller.access, ...may }
  }
  const name = caller.kind === 'os-account' ? caller.account : 'Recovery link'
  return { kind: caller.kind, name, email: null, role: null, access: 'full' as const, ...may }
}

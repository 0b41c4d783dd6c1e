import { statSync } from 'node:fs'
import { and, inArray, isNotNull, ne } from 'drizzle-orm'
import { isAdministrator } from '../../auth/access.js'
import { recentAuditEvents } from '../../auth/audit.js'
import { serverCounts, signInActivity } from '../../auth/overview.js'
import { user } from '../../db/schema.js'
import { listMailOutbox, smtpSettings } from '../../mail/index.js'
import type { SetupStep } from '../contract.js'
import type { HandlerGroup, PanelEnv } from '../service.js'
import { peopleOf, toAuditView } from './audit.js'
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

const LOOPBACK = /^(localhost|127\.\d+\.\d+\.\d+|\[::1\])$/i

/**
 * The first-run checklist: a base URL other machines can reach, an app's origin, SMTP proven by a
 * delivered mail, and an administrator. Each step reads the live state, so it ticks itself off.
 */
export async function setupChecklist(env: PanelEnv): Promise<SetupStep[]> {
  const { ctx, config: store } = env.gatehouse
  const config = store.get()
  const host = new URL(ctx.baseURL).hostname
  const smtp = ctx.mailer.isConfigured?.() ?? smtpSettings(config) !== null
  const delivered = smtp && (await listMailOutbox(ctx, { status: 'sent', limit: 1 })).total > 0
  const candidates = ctx.db
    .select({ id: user.id, email: user.email, role: user.role })
    .from(user)
    .where(and(isNotNull(user.role), ne(user.role, config.admin.defaultRole)))
    .all()
  const byId = config.admin.adminUserIds.length
    ? ctx.db.select({ id: user.id, email: user.email, role: user.role }).from(user).where(inArray(user.id, config.admin.adminUserIds.slice(0, 500))).all()
    : []
  const admin = [...byId, ...candidates].find((u) => isAdministrator(config, { userId: u.id, role: u.role }))
  return [
    { id: 'baseURL', done: !LOOPBACK.test(host), value: ctx.baseURL },
    { id: 'trustedOrigin', done: config.trustedOrigins.length > 0, value: config.trustedOrigins[0] ?? null },
    { id: 'smtp', done: delivered, value: smtp ? (config.mail.smtp.host ?? 'SMTP URL') : null },
    { id: 'admin', done: Boolean(admin), value: admin?.email ?? null },
  ]
}

export const systemHandlers: HandlerGroup<'server.info' | 'overview.get'> = (env) => ({
  'server.info'() {
    const apiURL = env.apiURL()
    const url = new URL(apiURL)
    const file = env.gatehouse.database.sqlite.name
    return {
      apiURL,
      origin: url.origin,
      basePath: env.gatehouse.config.get().basePath,
      port: Number(url.port || (url.protocol === 'https:' ? 443 : 80)),
      version: env.version,
      startedAt: env.startedAt,
      uptimeSeconds: Math.floor((Date.now() - env.startedAt) / 1000),
      databaseFile: file,
      databaseBytes: file === ':memory:' ? 0 : fileSize(file),
      mode: env.mode,
      features: features(),
    }
  },

  async 'overview.get'({ range }) {
    const { ctx } = env.gatehouse
    const recent = await recentAuditEvents(ctx, 12)
    return {
      counts: await serverCounts(ctx),
      activity: await signInActivity(ctx, range),
      recent: recent.map(toAuditView),
      people: await peopleOf(ctx, recent),
      setup: await setupChecklist(env),
    }
  },
})

import { isAdministrator } from '../admin/access.js'
import { allowedPerApp } from '../forward-auth/counts.js'
import { recentAuditEvents } from '../../core/audit.js'
import { listenerStates } from '../../config-checks.js'
import { currentOutage, outageAnswer } from '../../core/outage.js'
import { signUpExposure } from '../../core/sign-up-gate.js'
import { listMailOutbox, smtpSettings } from '../../mail/index.js'
import { peopleOf, toAuditView } from '../../panel-frame/audit-views.js'
import type { PanelEnv } from '../../panel-frame/env.js'
import type { SetupStep } from './panel-contract.js'
import { adminCandidates, serverCounts, signInActivity } from './store.js'

const LOOPBACK = /^(localhost|127\.\d+\.\d+\.\d+|\[::1\])$/i

/**
 * The first-run checklist: a base URL other machines can reach, an app's origin, SMTP proven by a
 * delivered mail, and an administrator. Each step reads the live state, so it ticks itself off.
 */
export async function setupChecklist(env: PanelEnv): Promise<SetupStep[]> {
  const { ctx } = env.gatehouse
  const config = ctx.config()
  const host = new URL(ctx.baseURL).hostname
  const smtp = ctx.mailer.isConfigured?.() ?? smtpSettings(config) !== null
  const delivered = smtp && (await listMailOutbox(ctx, { status: 'sent', limit: 1 })).total > 0
  const candidates = await adminCandidates(ctx, config.admin.defaultRole, config.admin.adminUserIds)
  const admin = candidates.find((u) => isAdministrator(config, { userId: u.id, role: u.role }))
  return [
    { id: 'baseURL', done: !LOOPBACK.test(host), value: ctx.baseURL },
    { id: 'trustedOrigin', done: config.trustedOrigins.length > 0, value: config.trustedOrigins[0] ?? null },
    { id: 'smtp', done: delivered, value: smtp ? (config.mail.smtp.host ?? 'SMTP URL') : null },
    { id: 'admin', done: Boolean(admin), value: admin?.email ?? null },
  ]
}

/** The overview: counts, sign-in activity, the latest events and the first-run checklist. */
export const overviewPanel = (env: PanelEnv) => ({
  'listeners.state'() {
    return { listeners: listenerStates(env.gatehouse.ctx) }
  },
  async 'overview.get'({ range }: { range: 'hours' | 'days' }) {
    const { ctx } = env.gatehouse
    try {
      const recent = await recentAuditEvents(ctx, 12)
      return {
        counts: await serverCounts(ctx),
        activity: await signInActivity(ctx, range),
        recent: recent.map(toAuditView),
        people: await peopleOf(ctx, recent),
        setup: await setupChecklist(env),
        protectedApps: await allowedPerApp(ctx, 24),
        outage: currentOutage(ctx),
        signUp: signUpExposure(ctx),
      }
    } catch (error) {
      // The storage is out: the overview still opens, and says so (issue 31 §6).
      if (!outageAnswer(ctx, error)) throw error
      return {
        counts: { users: 0, activeSessions: 0, organizations: 0, bannedUsers: 0 },
        activity: [],
        recent: [],
        people: {},
        setup: [],
        protectedApps: [],
        outage: currentOutage(ctx),
        signUp: signUpExposure(ctx),
      }
    }
  },
})

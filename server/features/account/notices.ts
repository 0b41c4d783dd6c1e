import type { RecordedAudit } from '../../core/audit.js'
import type { AuthContext, RequestMeta } from '../../core/context.js'
import type { SessionWithUser } from '../../core/sessions.js'
import type { SignInAttempt } from '../../core/sign-in.js'
import { deviceOf } from '../../core/user-agent.js'
import { findUserById } from '../../core/user-store.js'
import { networkOf } from '../../http/client-ip.js'
import type { OutgoingMail } from '../../mail/types.js'
import type { accountNoticesConfig } from './config.js'
import {
  appPasswordCreatedNotice,
  emailChangedNotice,
  type NoticeFrame,
  newDeviceSignInNotice,
  passkeyAddedNotice,
  passwordChangedNotice,
  twoFactorDisabledNotice,
} from './mail.js'
import { devicesSeenSince, earlierSignIns, signedInExactlySince } from './store.js'

/**
 * The security notices (issue 49 §11): mail to the person, through the outbox, when something
 * happened to their account's way in. Each is sent from the one place its event is recorded (the
 * audit event every path of it records, heard through the feature's `audited` hook) or, for a
 * sign-in from a new device, from the sign-in pipeline's last step (`signedIn`). `accountNotices.*`
 * switches each off. A notice never fails the action: a mail that cannot be queued is dropped
 * (a queued one is retried by the outbox).
 */

type NoticeSwitch = keyof ReturnType<typeof accountNoticesConfig.parse>

/** How long a device and network stay known: a sign-in from one not seen in this long is told. */
export const KNOWN_DEVICE_MS = 90 * 86_400_000

const on = (ctx: AuthContext, key: NoticeSwitch): boolean => ctx.config().accountNotices[key]

/** "Firefox on Windows, address 192.0.2.10", or null when the request said nothing of either. */
export function describeFrom(meta: RequestMeta | null): string | null {
  if (!meta || (!meta.userAgent && !meta.ipAddress)) return null
  const device = meta.userAgent ? deviceOf(meta.userAgent) : 'Unknown device'
  return meta.ipAddress ? `${device}, address ${meta.ipAddress}` : device
}

const frameOf = (ctx: AuthContext, at: number, meta: RequestMeta | null): NoticeFrame => ({
  appName: ctx.config().mail.appName,
  baseURL: ctx.baseURL,
  at: new Date(at),
  from: describeFrom(meta),
})

/** Queues the notice; a failure to queue it is swallowed so that the action it reports stands. */
async function deliver(ctx: AuthContext, mail: OutgoingMail): Promise<void> {
  try {
    await ctx.mailer.send(mail)
  } catch {
    // The outbox could not record it (the database refused the insert): the action still succeeds.
  }
}

const text = (value: unknown): string | null => (typeof value === 'string' && value ? value : null)

/** The notice an audit event calls for, or null. `admin` events name the person as their target. */
function noticeFor(
  event: RecordedAudit,
): { key: NoticeSwitch; render: (frame: NoticeFrame, user: { email: string; name: string }) => OutgoingMail | null } | null {
  const detail = event.detail ?? {}
  switch (event.type) {
    case 'user.password-changed':
      return { key: 'passwordChanged', render: (f, u) => passwordChangedNotice(f, u, 'changed') }
    case 'user.password-reset':
      return { key: 'passwordChanged', render: (f, u) => passwordChangedNotice(f, u, 'reset') }
    case 'user.password-set':
    case 'admin.set-user-password':
      // Set by someone else: the administrator's device is not the person's.
      return { key: 'passwordChanged', render: (f, u) => passwordChangedNotice({ ...f, from: null }, u, 'set-by-admin') }
    case 'user.email-changed': {
      const from = text(detail.from)
      const to = text(detail.to)
      if (!from || !to) return null
      return { key: 'emailChanged', render: (f, u) => emailChangedNotice(f, u, from, to) }
    }
    case 'two-factor.disabled':
      // Cancelling an enrolment that never finished turns nothing off.
      if (detail.wasEnabled === false) return null
      return { key: 'twoFactorDisabled', render: (f, u) => twoFactorDisabledNotice(f, u) }
    case 'passkey.registered':
      return { key: 'passkeyAdded', render: (f, u) => passkeyAddedNotice(f, u, text(detail.name)) }
    case 'app-password.created':
      return { key: 'appPasswordCreated', render: (f, u) => appPasswordCreatedNotice(f, u, text(detail.name) ?? 'unnamed') }
    default:
      return null
  }
}

/** The account feature's `audited` hook: the notice of a recorded event of a person's account. */
export async function noticeOfAuditEvent(ctx: AuthContext, event: RecordedAudit): Promise<void> {
  if (event.outcome !== 'success' || !event.targetUserId) return
  // An impersonation session may not take these steps (IMPERSONATION_NOT_ALLOWED); should one, the person is not told of the admin's act as of their own.
  if (event.meta?.impersonation) return
  const wanted = noticeFor(event)
  if (!wanted || !on(ctx, wanted.key)) return
  try {
    const person = await findUserById(ctx, event.targetUserId)
    if (!person) return
    const mail = wanted.render(frameOf(ctx, event.at, event.meta), { email: person.email, name: person.name })
    if (mail) await deliver(ctx, mail)
  } catch {
    // Reading the person failed: the action still succeeds, without its notice.
  }
}

/** A sign-in of the person's sign-up (the session sign-up opens), which is never a "new device". */
const atSignUp = (detail: Record<string, unknown> | null): boolean => detail?.via === 'sign-up' || detail?.method === 'sign-up'

/**
 * The account feature's `signedIn` hook: a sign-in whose device (browser and system) on its
 * network (IPv4 /24, IPv6 /64) matches none of the person's sessions and successful sign-ins of the
 * last 90 days is told to them. Never for their first sign-in (nothing earlier but their sign-up).
 */
export async function noticeOfSignIn(
  ctx: AuthContext,
  meta: RequestMeta,
  signedIn: SessionWithUser,
  attempt: SignInAttempt,
): Promise<void> {
  if (!on(ctx, 'newDeviceSignIn') || meta.impersonation || attempt.method === 'anonymous' || atSignUp(attempt.detail ?? null)) return
  try {
    const { user, session } = signedIn
    const earlier = await earlierSignIns(ctx, user.id, session.id)
    if (!earlier.some((detail) => !atSignUp(detail))) return
    const now = ctx.clock.now()
    const since = new Date(now - KNOWN_DEVICE_MS)
    if (await signedInExactlySince(ctx, user.id, meta, since, session.id)) return
    const key = (ip: string | null, ua: string | null) => `${deviceOf(ua)}|${networkOf(ip)}`
    const current = key(meta.ipAddress, meta.userAgent)
    const seen = await devicesSeenSince(ctx, user.id, since, session.id)
    if (seen.some((d) => key(d.ipAddress, d.userAgent) === current)) return
    await deliver(ctx, newDeviceSignInNotice(frameOf(ctx, now, meta), { email: user.email, name: user.name }))
  } catch {
    // The history could not be read: the sign-in stands, without its notice.
  }
}

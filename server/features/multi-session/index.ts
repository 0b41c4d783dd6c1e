import { defineFeature } from '../../feature.js'
import { configSections } from './config.js'
import { deviceCookies, expireDeviceCookie, multiCookieName, setDeviceCookie } from './cookies.js'
import { MULTI_SESSION_ERR } from './errors.js'
import { endEarlierSessionsOf, endSessions } from './rules.js'
import { multiSessionRoutes } from './routes.js'

/**
 * Several accounts in one browser (better-auth's multi-session plugin): each sign-in also sets a
 * device cookie for its session; the browser lists them, switches the active one and revokes one;
 * sign-out ends them all.
 */
export const multiSessionFeature = defineFeature({
  id: 'multi-session',
  config: configSections,
  errors: MULTI_SESSION_ERR,
  routes: multiSessionRoutes,
  // better-auth's after hook on every new session: an earlier session of the same user in this
  // browser is ended, and the new one gets its cookie unless the browser holds maximumSessions.
  signedIn: async (rc, signedIn) => {
    const conf = rc.ctx.config().multiSession
    if (!conf.enabled) return
    const name = multiCookieName(rc, signedIn.session.token)
    if (rc.cookies.has(name)) return
    const devices = deviceCookies(rc)
    const multiKeys = [...rc.cookies.keys()].filter((key) => key.includes('_multi-'))
    const ended = await endEarlierSessionsOf(rc.ctx, signedIn.user.id, [...devices.values()])
    for (const [key, token] of devices) if (ended.has(token)) expireDeviceCookie(rc, key)
    // Counted as better-auth counts: the browser's device cookies left, plus the session cookie just set.
    if (multiKeys.length - ended.size + 1 > conf.maximumSessions) return
    setDeviceCookie(rc, signedIn.session.token)
  },
  signingOut: async (rc) => {
    if (!rc.ctx.config().multiSession.enabled) return
    const devices = deviceCookies(rc)
    for (const key of devices.keys()) expireDeviceCookie(rc, key)
    await endSessions(rc.ctx, [...devices.values()])
  },
})

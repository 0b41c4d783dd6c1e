import { defineFeature } from '../../feature.js'
import { lastLoginMethodColumns } from './columns.js'
import { serializeCookie } from '../../http/cookies.js'
import { configSections } from './config.js'
import { lastLoginMethodOf } from './rules.js'
import { storeLastLoginMethod } from './store.js'

/**
 * The last login method (better-auth's last-login-method plugin): after every sign-in by a method
 * it knows, a cookie readable by the page's script (not HttpOnly) names the method, so a sign-in
 * form can suggest it next time.
 */
export const lastLoginMethodFeature = defineFeature({
  id: 'last-login-method',
  columns: lastLoginMethodColumns,
  config: configSections,
  signedIn: async (rc, signedIn, attempt) => {
    const conf = rc.ctx.config().lastLoginMethod
    if (!conf.enabled) return
    const method = lastLoginMethodOf(attempt)
    if (!method) return
    if (conf.storeInDatabase && signedIn.user.lastLoginMethod !== method) await storeLastLoginMethod(rc.ctx, signedIn.user.id, method)
    // The session cookie's attributes, with the plugin's Max-Age and without HttpOnly.
    const cookie = serializeCookie(conf.cookieName, encodeURIComponent(method), rc.names.secure, conf.maxAge).replace('; HttpOnly', '')
    rc.response.headers.append('set-cookie', cookie)
  },
})

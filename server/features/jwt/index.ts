import type { AuthContext } from '../../core/context.js'
import { defineFeature, type SessionAnswer } from '../../feature.js'
import { signSessionToken } from './keys.js'
import { jwtPanel } from './panel.js'
import { jwtRoutes } from './routes.js'
import * as tables from './schema.js'
import { configSections } from './config.js'

/** better-auth's after-hook on get-session: the token in `set-auth-jwt`, exposed to browsers. */
async function setJwtHeader(ctx: AuthContext, answer: SessionAnswer, headers: Headers): Promise<void> {
  headers.set('set-auth-jwt', await signSessionToken(ctx, answer))
  const exposed = new Set(
    (headers.get('access-control-expose-headers') ?? '')
      .split(',')
      .map((h) => h.trim())
      .filter(Boolean),
  )
  exposed.add('set-auth-jwt')
  headers.set('access-control-expose-headers', [...exposed].join(', '))
}

/** JWT and JWKS (better-auth's jwt plugin): apps verify users offline from a token and the public keys. */
export const jwtFeature = defineFeature({
  id: 'jwt',
  config: configSections,
  tables,
  routes: jwtRoutes,
  panel: jwtPanel,
  sessionAnswered: (ctx, answer, headers) => {
    const c = ctx.config().jwt
    if (!c.enabled || c.disableSettingJwtHeader) return
    return setJwtHeader(ctx, answer, headers)
  },
})

import type { AuthContext } from '../../core/context.js'
import type { CounterDeclaration } from '../../core/events.js'

const TOKENS = 'gatehouse_oidc_tokens_issued_total'

/** The OpenID provider's counters (Feature `metrics`). */
export const oidcMetrics: readonly CounterDeclaration[] = [
  {
    name: TOKENS,
    help: 'Token responses of the OpenID provider by grant type',
    // Any other grant type counts as `other`.
    labels: [
      {
        name: 'grant',
        values: ['authorization_code', 'refresh_token', 'client_credentials', 'urn:ietf:params:oauth:grant-type:device_code'],
      },
    ],
  },
]

/** The provider issued tokens for a grant. */
export const countToken = (ctx: AuthContext, grant: string): void => ctx.events.count(TOKENS, grant)

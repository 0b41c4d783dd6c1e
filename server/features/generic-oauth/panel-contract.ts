import { z } from 'zod'
import { mutation, ok, query } from '../../panel/op.js'

/** The Providers view's generic OAuth operations (zod only: shared with the renderer). */

export const genericProviderViewSchema = z.object({
  providerId: z.string(),
  name: z.string(),
  discoveryUrl: z.string(),
  authorizationUrl: z.string(),
  tokenUrl: z.string(),
  userInfoUrl: z.string(),
  clientId: z.string(),
  /** The secret never leaves the server: only whether one is stored. */
  hasClientSecret: z.boolean(),
  scopes: z.array(z.string()),
  pkce: z.boolean(),
  /** The callback URL to register at the provider. */
  redirectURI: z.string(),
})
export type GenericProviderView = z.infer<typeof genericProviderViewSchema>

const providerId = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'letters, digits, ".", "_" and "-"')

export const genericOAuthContract = {
  'genericOAuth.list': query('The generic OAuth / OpenID Connect providers', z.object({}).strict(), z.array(genericProviderViewSchema)),
  'genericOAuth.save': mutation(
    'Adds a generic OAuth provider, or saves one (a missing clientSecret keeps the stored one; an empty URL removes it)',
    z
      .object({
        providerId,
        name: z.string().max(100),
        discoveryUrl: z.string().max(2000),
        authorizationUrl: z.string().max(2000),
        tokenUrl: z.string().max(2000),
        userInfoUrl: z.string().max(2000),
        clientId: z.string().max(500),
        clientSecret: z.string().max(4000).optional(),
        scopes: z.array(z.string().min(1).max(200)).max(50),
        pkce: z.boolean(),
      })
      .strict(),
    genericProviderViewSchema,
  ),
  'genericOAuth.remove': mutation('Removes a generic OAuth provider', z.object({ providerId }).strict(), ok),
}

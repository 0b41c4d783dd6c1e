import { z } from 'zod'
import { mutation, ok, query, readBase } from '../../panel-frame/op.js'

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
    'Adds a generic OAuth provider, or saves one: only the fields given (a missing one, clientSecret included, keeps the stored value; an empty URL removes it); with `base` (each field given as read), refused (409 CONFLICT) when another admin changed one since',
    z
      .object({
        providerId,
        name: z.string().max(100).optional(),
        discoveryUrl: z.string().max(2000).optional(),
        authorizationUrl: z.string().max(2000).optional(),
        tokenUrl: z.string().max(2000).optional(),
        userInfoUrl: z.string().max(2000).optional(),
        clientId: z.string().max(500).optional(),
        clientSecret: z.string().max(4000).optional(),
        scopes: z.array(z.string().min(1).max(200)).max(50).optional(),
        pkce: z.boolean().optional(),
        base: readBase,
      })
      .strict(),
    genericProviderViewSchema,
  ),
  'genericOAuth.remove': mutation('Removes a generic OAuth provider', z.object({ providerId }).strict(), ok),
}

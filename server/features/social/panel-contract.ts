import { z } from 'zod'
import { mutation, none, query, readBase } from '../../panel-frame/op.js'

/** The Providers view's operations (zod only: shared with the renderer). */

export const providerViewSchema = z.object({
  id: z.string(),
  name: z.string(),
  enabled: z.boolean(),
  /** off: no client id; configured: a client id but turned off; enabled: in use. */
  status: z.enum(['off', 'configured', 'enabled']),
  clientId: z.string(),
  /** The secret never leaves the server: only whether one is stored. */
  hasClientSecret: z.boolean(),
  scopes: z.array(z.string()),
  trustedForLinking: z.boolean(),
  overrides: z.record(z.string(), z.string()),
  redirectURI: z.string(),
  overridableEndpoints: z.array(z.string()),
})
export type ProviderView = z.infer<typeof providerViewSchema>

export const socialContract = {
  'providers.list': query('The social providers and their settings', none, z.array(providerViewSchema)),
  'providers.update': mutation(
    "Saves a provider's settings: only the fields given (a missing one, clientSecret included, keeps the stored value); with `base` (each field given as read), refused (409 CONFLICT) when another admin changed one since",
    z
      .object({
        id: z.string().min(1).max(40),
        enabled: z.boolean().optional(),
        clientId: z.string().max(500).optional(),
        clientSecret: z.string().max(4000).optional(),
        scopes: z.array(z.string().min(1).max(200)).max(50).optional(),
        trustedForLinking: z.boolean().optional(),
        overrides: z.record(z.string(), z.string().max(2000)).optional(),
        base: readBase,
      })
      .strict(),
    providerViewSchema,
  ),
  'providers.testSignIn': mutation(
    "Starts a test sign-in: the provider's authorization URL to open and the id to read the outcome with (nobody is signed in)",
    z.object({ id: z.string().min(1).max(40) }).strict(),
    z.object({ url: z.string(), testId: z.string() }),
  ),
  'providers.testResult': query(
    'The outcome of a test sign-in: pending until the provider calls back, then success or the error code',
    z.object({ testId: z.string().min(1).max(100) }).strict(),
    z.object({
      status: z.enum(['pending', 'success', 'failure']),
      code: z.string().nullable(),
      profile: z.object({ id: z.string(), name: z.string(), email: z.string().nullable(), emailVerified: z.boolean() }).nullable(),
    }),
  ),
}

import { z } from 'zod'
import { mutation, none, query, readBase } from '../../panel-frame/op.js'
import { forwardAuthPolicy, forwardAuthRule } from './config.js'

/** The "Protected apps" view's operations (zod only: shared with the renderer). */

const snippetsSchema = z.object({ nginx: z.string(), caddy: z.string(), traefik: z.string() })

export const forwardAuthContract = {
  'forwardAuth.get': query(
    'Forward auth: on or off, the ordered rules, the default policy, the endpoints and a proxy snippet per rule',
    none,
    z.object({
      enabled: z.boolean(),
      defaultPolicy: forwardAuthPolicy,
      rules: z.array(forwardAuthRule),
      endpoints: z.object({ authRequest: z.string(), forwardAuth: z.string() }),
      /** One per rule, in order: nginx, Caddy and Traefik configuration for its domain. */
      snippets: z.array(snippetsSchema),
      crossSubDomainCookies: z.object({ enabled: z.boolean(), domain: z.string().nullable() }),
    }),
  ),
  'forwardAuth.save': mutation(
    'Changes the forward-auth settings given: on or off, the rules (in order, the list replaced whole) and the default policy; with `base` (each given as read, by its path: `forwardAuth.rules`), refused (409 CONFLICT) when another admin changed one since',
    z
      .object({
        enabled: z.boolean().optional(),
        defaultPolicy: forwardAuthPolicy.optional(),
        rules: z.array(forwardAuthRule).max(500).optional(),
        base: readBase,
      })
      .strict(),
    z.object({ success: z.boolean() }),
  ),
  'forwardAuth.test': query(
    'What a user (or nobody) gets for a URL, and which rule decided',
    z
      .object({
        url: z.string().min(1).max(8192),
        /** Empty: not signed in. */
        email: z.string().max(320).default(''),
        /** Whether the session passed a second factor. */
        secondFactor: z.boolean().default(false),
      })
      .strict(),
    z.object({
      status: z.number(),
      outcome: z.enum([
        'bypass',
        'allowed',
        'unauthenticated',
        'second-factor',
        'unverified',
        'enrol',
        'forbidden',
        'invalid-url',
        'unknown-user',
      ]),
      rule: z.string().nullable(),
      headers: z.record(z.string(), z.string()),
    }),
  ),
}

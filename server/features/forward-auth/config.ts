import { z } from 'zod'

/** `app.example.lan`, `*.example.lan` or an IPv4 address: host names only (no scheme, port or path). */
const DOMAIN = /^(\*\.)?(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/

const domain = z
  .string()
  .trim()
  .transform((v) => v.toLowerCase())
  .refine((v) => DOMAIN.test(v), {
    message: 'must be a host name such as "app.example.lan" or "*.example.lan" (no scheme, port or path)',
  })

/** A regular expression on the request path; compiled once here, so a bad one is refused with the config. */
const resource = z.string().superRefine((source, ctx) => {
  try {
    new RegExp(source)
  } catch (error) {
    ctx.addIssue({ code: 'custom', message: `invalid regular expression ${JSON.stringify(source)}: ${(error as Error).message}` })
  }
})

const names = z.array(z.string().trim().min(1)).min(1)

export const forwardAuthPolicy = z.enum(['bypass', 'signed-in', 'two-factor', 'deny'])
export type ForwardAuthPolicy = z.output<typeof forwardAuthPolicy>

export const forwardAuthRule = z.strictObject({
  domain,
  /** Regular expressions on the decoded, dot-segment-resolved, slash-merged path without the query; any one matching is enough. Absent: every path. */
  resources: z.array(resource).min(1).optional(),
  policy: forwardAuthPolicy,
  /**
   * A requirement of the rule (not a matching criterion): a signed-in user who does not meet it gets
   * 403. Within a list any one entry is enough; every list given must hold.
   */
  subject: z
    .strictObject({
      roles: names.optional(),
      /** Organization slugs. */
      organizations: names.optional(),
      /** Teams: `organization-slug/team name`, or a bare team name of one of `organizations` (required then). */
      teams: names.optional(),
    })
    .refine((s) => s.organizations !== undefined || !s.teams?.some((t) => !t.includes('/')), {
      message:
        'a bare team name needs "organizations" (anyone may create an organization with a team of that name): write "organization-slug/team name" or add "organizations"',
      path: ['teams'],
    })
    .optional(),
})
export type ForwardAuthRule = z.output<typeof forwardAuthRule>

/**
 * `forwardAuth.*`: Gatehouse in front of apps that have no sign-in of their own, through the reverse
 * proxy (nginx `auth_request`, Caddy `forward_auth`, Traefik `ForwardAuth`). Rules are ordered: the
 * first whose domain (and resources, when given) match the request decides; none: `defaultPolicy`.
 */
export const forwardAuthConfig = z
  .object({
    enabled: z.boolean().default(false),
    rules: z.array(forwardAuthRule).default([]),
    defaultPolicy: forwardAuthPolicy.default('deny'),
  })
  .prefault({})

/** The config sections this feature owns, by path (its defineFeature declares them; bin/gen-features.js mounts them). */
export const configSections = { forwardAuth: forwardAuthConfig }

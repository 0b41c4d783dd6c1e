import { z } from 'zod'

/**
 * `anonymous.*`: better-auth's anonymous plugin options. `emailDomainName` makes the generated
 * addresses `temp-{id}@{emailDomainName}` (default `{id}@anonymous.placeholder.invalid`);
 * `disableDeleteAnonymousUser` keeps the anonymous user when its owner signs in or up another way
 * and refuses POST /delete-anonymous-user. (The plugin's function options, generateName,
 * generateRandomEmail and onLinkAccount, have no config form.)
 */
export const anonymousConfig = z
  .object({
    enabled: z.boolean().default(false),
    emailDomainName: z
      .string()
      .regex(/^[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)+$/, 'must be a domain name')
      .optional(),
    disableDeleteAnonymousUser: z.boolean().default(false),
  })
  .prefault({})

export type AnonymousConfig = z.output<typeof anonymousConfig>

/** The config sections this feature owns, by path (its defineFeature declares them; bin/gen-features.js mounts them). */
export const configSections = { anonymous: anonymousConfig }

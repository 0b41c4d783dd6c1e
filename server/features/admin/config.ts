import { z } from 'zod'
import { ERR } from '../../core/errors.js'
import { ADMIN_STATEMENTS } from './statements.js'

/**
 * `admin.*`: better-auth's admin plugin options (SPEC §6 Admin, reference §8), same names and
 * defaults. Durations are in seconds, like better-auth's options.
 */

const seconds = z.number().int().min(0)
/** A role name as stored in user.role (comma-separated lists, so no commas). */
const roleName = z.string().regex(/^[A-Za-z0-9_-]+$/, 'may contain only letters, digits, "_" and "-"')

export const adminConfig = z
  .object({
    defaultRole: roleName.default('user'),
    /** Roles that make a user an administrator (impersonating them needs `impersonate-admins`). */
    adminRoles: z.array(roleName).default(['admin']),
    /** These user ids pass every admin permission check. */
    adminUserIds: z.array(z.string().min(1)).default([]),
    impersonationSessionDuration: seconds.min(1).default(3600),
    defaultBanReason: z.string().min(1).default('No reason'),
    /** Seconds a ban lasts when ban-user gives no banExpiresIn; unset: until lifted. */
    defaultBanExpiresIn: seconds.min(1).optional(),
    bannedUserMessage: z.string().min(1).default(ERR.BANNED_USER),
    /** Custom roles: name → resource → allowed actions. Added to (or replacing) the built-in admin and user. */
    roles: z
      .record(
        roleName,
        z.strictObject({
          user: z.array(z.enum(ADMIN_STATEMENTS.user)).optional(),
          session: z.array(z.enum(ADMIN_STATEMENTS.session)).optional(),
        }),
      )
      .default({}),
  })
  .prefault({})

/** The config sections this feature owns, by path (its defineFeature declares them; bin/gen-features.js mounts them). */
export const configSections = { admin: adminConfig }

import { z } from 'zod'
import { mutation, ok, query, requires } from '../../panel-frame/op.js'
import { auditEventSchema, peopleSchema } from '../../panel-frame/shapes.js'

/** The control panel's user operations (zod only: shared with the renderer). Times are epoch ms. */

const ms = z.number()
const id = z.string().min(1).max(200)

export const userRowSchema = z.object({
  id: z.string(),
  name: z.string(),
  email: z.string(),
  emailVerified: z.boolean(),
  image: z.string().nullable(),
  username: z.string().nullable(),
  displayUsername: z.string().nullable(),
  role: z.string().nullable(),
  banned: z.boolean().nullable(),
  banReason: z.string().nullable(),
  banExpires: ms.nullable(),
  /** An anonymous user (the anonymous feature). */
  isAnonymous: z.boolean(),
  createdAt: ms,
  updatedAt: ms,
})
export type UserView = z.infer<typeof userRowSchema>

export const sessionRowSchema = z.object({
  id: z.string(),
  /** The first characters only: the panel never needs (nor shows) a whole bearer token. */
  tokenPreview: z.string(),
  userId: z.string(),
  expiresAt: ms,
  createdAt: ms,
  updatedAt: ms,
  ipAddress: z.string().nullable(),
  userAgent: z.string().nullable(),
  impersonatedBy: z.string().nullable(),
  activeOrganizationId: z.string().nullable(),
})
export type SessionView = z.infer<typeof sessionRowSchema>

export const accountRowSchema = z.object({
  id: z.string(),
  providerId: z.string(),
  accountId: z.string(),
  scope: z.string().nullable(),
  hasPassword: z.boolean(),
  createdAt: ms,
  updatedAt: ms,
})

export const adminContract = {
  'users.list': query(
    'Users with list-users semantics (search, filter, sort, pagination)',
    z
      .object({
        searchValue: z.string().max(320).optional(),
        /** `any`: the panel's one search box, across name, email and username (contains). */
        searchField: z.enum(['email', 'name', 'any']).optional(),
        searchOperator: z.enum(['contains', 'starts_with', 'ends_with']).optional(),
        filterField: z.string().max(64).optional(),
        filterValue: z.union([z.string(), z.number(), z.boolean()]).optional(),
        filterOperator: z.enum(['eq', 'ne', 'lt', 'lte', 'gt', 'gte', 'contains']).optional(),
        sortBy: z.string().max(64).optional(),
        sortDirection: z.enum(['asc', 'desc']).optional(),
        limit: z.number().int().min(1).max(500).default(25),
        offset: z.number().int().min(0).default(0),
      })
      .strict(),
    z.object({ users: z.array(userRowSchema), total: z.number(), limit: z.number(), offset: z.number() }),
  ),
  'users.get': query(
    'One user with accounts, sessions, organizations and audit trail',
    z.object({ userId: id }).strict(),
    z.object({
      user: userRowSchema,
      accounts: z.array(accountRowSchema),
      sessions: z.array(sessionRowSchema),
      memberships: z.array(z.object({ organizationId: z.string(), name: z.string(), slug: z.string(), role: z.string() })),
      audit: z.array(auditEventSchema),
      people: peopleSchema,
      /**
       * The ban in force, from its audit entry: who (a user id, else the OS account, recovery link
       * or channel) and when; null when the user is not banned or the ban left no entry (an import).
       */
      ban: z.object({ byUserId: z.string().nullable(), by: z.string().nullable(), at: ms }).nullable(),
      /** How the user last signed in (user.lastLoginMethod), when `lastLoginMethod.storeInDatabase` keeps it. */
      lastLoginMethod: z.object({ stored: z.boolean(), method: z.string().nullable() }),
      /** The login throttle's locks on this account in force now. */
      locks: z.array(z.object({ key: z.string(), kind: z.enum(['password', 'second-factor']), failures: z.number(), lockedUntil: ms })),
    }),
  ),
  'users.roles': query(
    'The roles defined (admin.roles and the built-in ones)',
    z.object({}).strict(),
    z.object({ roles: z.array(z.string()) }),
  ),
  'users.update': requires(
    ['user', 'update'],
    mutation(
      "Changes a user's name or email",
      z
        .object({ userId: id, name: z.string().trim().min(1).max(200).optional(), email: z.string().trim().min(1).max(320).optional() })
        .strict(),
      z.object({ user: userRowSchema }),
    ),
  ),
  'users.inviteToSignUp': requires(
    ['user', 'create'],
    mutation(
      'Invites an address to sign up (signUp.mode "invitation"): the link to the hosted sign-up page, to send or copy',
      z.object({ email: z.string().min(3).max(320) }).strict(),
      z.object({ email: z.string(), link: z.string(), expiresAt: ms }),
    ),
  ),
  'users.sendPasswordReset': requires(
    ['user', 'update'],
    mutation('Mails the user a password-reset link (through the outbox)', z.object({ userId: id }).strict(), ok),
  ),
  'users.sendVerification': requires(
    ['user', 'update'],
    mutation('Mails the user a link verifying their email (through the outbox)', z.object({ userId: id }).strict(), ok),
  ),
  'users.sendSetUpLink': requires(
    ['user', 'update'],
    mutation(
      'Mails the user a single-use sign-in link (an hour) that opens the two-factor set-up page (through the outbox)',
      z.object({ userId: id }).strict(),
      ok,
    ),
  ),
  'users.unlock': requires(
    ['user', 'update'],
    mutation("Lifts the login throttle's locks on the user's account", z.object({ userId: id }).strict(), z.object({ lifted: z.number() })),
  ),
  'users.bulk': mutation(
    'One action on several users (each audited as its own)',
    z
      .object({
        action: z.enum(['ban', 'revokeSessions', 'remove']),
        userIds: z.array(id).min(1).max(500),
        banReason: z.string().max(500).optional(),
      })
      .strict(),
    z.object({ done: z.array(z.string()), failed: z.array(z.object({ userId: z.string(), code: z.string(), message: z.string() })) }),
  ),
  'users.create': requires(
    ['user', 'create'],
    mutation(
      'Creates a user with an email and password',
      z
        .object({
          name: z.string().min(1).max(200),
          email: z.string().min(1).max(320),
          password: z.string().min(1).max(1024),
          role: z.string().max(200).optional(),
          emailVerified: z.boolean().optional(),
        })
        .strict(),
      z.object({ user: userRowSchema }),
    ),
  ),
  'users.setRole': requires(
    ['user', 'set-role'],
    mutation(
      'Sets a user role (comma-separated for several)',
      z.object({ userId: id, role: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]) }).strict(),
      z.object({ user: userRowSchema }),
    ),
  ),
  'users.ban': requires(
    ['user', 'ban'],
    mutation(
      'Bans a user (all sessions revoked)',
      z
        .object({
          userId: id,
          banReason: z.string().max(500).optional(),
          banExpiresIn: z.number().int().min(1).optional(),
        })
        .strict(),
      z.object({ user: userRowSchema }),
    ),
  ),
  'users.unban': requires(['user', 'ban'], mutation('Lifts a ban', z.object({ userId: id }).strict(), z.object({ user: userRowSchema }))),
  'users.setPassword': requires(
    ['user', 'set-password'],
    mutation(
      "Sets a user's password",
      z.object({ userId: id, newPassword: z.string().min(1).max(1024) }).strict(),
      z.object({ status: z.boolean() }),
    ),
  ),
  'users.verifyEmail': requires(
    ['user', 'set-email'],
    mutation("Marks a user's email as verified", z.object({ userId: id }).strict(), z.object({ user: userRowSchema })),
  ),
  'users.revokeSession': requires(
    ['session', 'revoke'],
    mutation('Revokes one session', z.object({ userId: id, sessionId: id }).strict(), ok),
  ),
  'users.revokeSessions': requires(
    ['session', 'revoke'],
    mutation('Revokes every session of a user', z.object({ userId: id }).strict(), ok),
  ),
  'users.remove': requires(['user', 'delete'], mutation('Deletes a user', z.object({ userId: id }).strict(), ok)),
  'users.impersonationLink': requires(
    ['user', 'impersonate'],
    mutation(
      'A one-time link that signs the browser in as the user (an impersonation session)',
      z.object({ userId: id }).strict(),
      z.object({ url: z.string(), expiresAt: ms }),
    ),
  ),
}

import { z } from 'zod'
import { featureContracts } from '../features/panel-contracts.js'
import { mutation, none, ok, type OpDef, query } from './op.js'

export type { OpDef } from './op.js'

/**
 * The control panel's operation contract: every operation is declared once, here, with the zod
 * schema of its input and of its output. Electron main registers each one on IPC, the browser
 * panel's loopback server (server/panel/http.ts) serves each one over HTTP, and the renderer calls
 * them through one typed client. This module is shared with the renderer: zod only, no Node APIs.
 *
 * Times cross the boundary as epoch milliseconds (JSON-safe for the HTTP transport).
 */

const ms = z.number()
const id = z.string().min(1).max(200)
const json = z.record(z.string(), z.unknown())

// ---------------------------------------------------------------- shared shapes

export const auditEventSchema = z.object({
  id: z.number(),
  type: z.string(),
  outcome: z.enum(['success', 'failure']),
  actorUserId: z.string().nullable(),
  targetUserId: z.string().nullable(),
  target: z.string().nullable(),
  ipAddress: z.string().nullable(),
  userAgent: z.string().nullable(),
  detail: json.nullable(),
  createdAt: ms,
})
export type AuditEventView = z.infer<typeof auditEventSchema>

/** The person an event names, shown instead of the bare id. */
export const personSchema = z.object({ id: z.string(), name: z.string(), email: z.string() })
export type PersonView = z.infer<typeof personSchema>
/** The people a list of events names, by user id. */
export const peopleSchema = z.record(z.string(), personSchema)

/** One step of the first-run checklist on the overview. */
export const setupStepSchema = z.object({
  id: z.enum(['baseURL', 'trustedOrigin', 'smtp', 'admin']),
  done: z.boolean(),
  /** What is set now (the base URL, the first origin, the SMTP host, the admin's email), if anything. */
  value: z.string().nullable(),
})
export type SetupStep = z.infer<typeof setupStepSchema>

export const auditFilterSchema = z
  .object({
    type: z.string().max(200).optional(),
    /** A user id or an email address (matched as actor, target, or the email a failed sign-in named). */
    user: z.string().max(320).optional(),
    ip: z.string().max(100).optional(),
    outcome: z.enum(['success', 'failure']).optional(),
    from: ms.optional(),
    to: ms.optional(),
  })
  .strict()
export type AuditFilter = z.infer<typeof auditFilterSchema>

export const activityBucketSchema = z.object({ start: ms, signIns: z.number(), failures: z.number() })

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

export const organizationRowSchema = z.object({
  id: z.string(),
  name: z.string(),
  slug: z.string(),
  logo: z.string().nullable(),
  metadata: z.string().nullable(),
  createdAt: ms,
  members: z.number(),
})
export type OrganizationView = z.infer<typeof organizationRowSchema>

export const memberRowSchema = z.object({
  id: z.string(),
  userId: z.string(),
  organizationId: z.string(),
  role: z.string(),
  teamId: z.string().nullable(),
  createdAt: ms,
  user: z.object({ id: z.string(), name: z.string(), email: z.string() }).nullable(),
})

export const teamRowSchema = z.object({
  id: z.string(),
  name: z.string(),
  organizationId: z.string(),
  createdAt: ms,
  updatedAt: ms.nullable(),
})

export const invitationRowSchema = z.object({
  id: z.string(),
  organizationId: z.string(),
  email: z.string(),
  role: z.string().nullable(),
  status: z.string(),
  teamId: z.string().nullable(),
  inviterId: z.string(),
  expiresAt: ms,
  createdAt: ms.nullable(),
})

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

export const settingsIssueSchema = z.object({ path: z.string(), message: z.string() })

// ---------------------------------------------------------------- the operations

const coreContract = {
  // Server and overview
  'server.info': query(
    'Where the server listens and how it runs',
    none,
    z.object({
      apiURL: z.string(),
      origin: z.string(),
      basePath: z.string(),
      port: z.number(),
      version: z.string(),
      startedAt: ms,
      uptimeSeconds: z.number(),
      databaseFile: z.string(),
      databaseBytes: z.number(),
      mode: z.enum(['desktop', 'browser']),
      /** Panel areas whose domain functions this build has. */
      features: z.object({ admin: z.boolean(), organizations: z.boolean(), providers: z.boolean(), email: z.boolean() }),
    }),
  ),
  'overview.get': query(
    'Counts, sign-in activity and the latest audit events',
    z.object({ range: z.enum(['hours', 'days']).default('hours') }).strict(),
    z.object({
      counts: z.object({
        users: z.number(),
        activeSessions: z.number(),
        organizations: z.number(),
        bannedUsers: z.number(),
      }),
      activity: z.array(activityBucketSchema),
      recent: z.array(auditEventSchema),
      people: peopleSchema,
      /** The first-run checklist: shown until every step is done. */
      setup: z.array(setupStepSchema),
    }),
  ),

  // Settings
  'settings.get': query(
    'The effective configuration, the stored layer and the keys start-up options override',
    none,
    z.object({
      effective: json,
      stored: json,
      /** Dotted paths whose effective value comes from --config, flags or the environment. */
      overridden: z.array(z.string()),
      /** Keys that only apply at start-up (changing them needs a restart). */
      restartRequired: z.array(z.string()),
    }),
  ),
  'settings.update': mutation(
    'Validates a partial change with the config schema and applies it live',
    z.object({ patch: json }).strict(),
    z.object({ effective: json, overridden: z.array(z.string()) }),
  ),
  'settings.validate': query(
    'Validates a partial change without applying it',
    z.object({ patch: json }).strict(),
    z.object({ valid: z.boolean(), issues: z.array(settingsIssueSchema) }),
  ),

  // Brute-force locks (docs/SECURITY.md)
  'security.locks': query(
    'Identifiers locked right now by the per-account password throttle',
    none,
    z.object({ locks: z.array(z.object({ key: z.string(), failures: z.number(), lockedUntil: ms })) }),
  ),
  'security.unlock': mutation('Lifts the lock of one identifier (e.g. email:ada@example.com)', z.object({ key: z.string().min(1).max(400) }).strict(), ok),

  // Audit log
  'audit.list': query(
    'Audit events matching a filter, newest first',
    auditFilterSchema.extend({
      limit: z.number().int().min(1).max(500).default(50),
      offset: z.number().int().min(0).default(0),
    }),
    z.object({ events: z.array(auditEventSchema), total: z.number(), people: peopleSchema }),
  ),
  'audit.types': query('Event types present in the log', none, z.array(z.string())),
  'audit.export': query(
    'Every event matching a filter as a CSV or JSON file',
    auditFilterSchema.extend({ format: z.enum(['csv', 'json']) }),
    z.object({ filename: z.string(), mime: z.string(), content: z.string(), count: z.number() }),
  ),
  'audit.exportPage': query(
    'One page of an export of every event matching a filter, newest first: the client asks page after page (after = the cursor returned) until done, showing progress against total',
    auditFilterSchema.extend({
      format: z.enum(['csv', 'json']),
      after: z.object({ createdAt: ms, id: z.number().int() }).nullable().default(null),
      size: z.number().int().min(1).max(5000).default(1000),
    }),
    z.object({
      /** CSV lines (the header on the first page) or JSON array items joined with ",\n" (the client adds the brackets). */
      content: z.string(),
      count: z.number(),
      total: z.number(),
      next: z.object({ createdAt: ms, id: z.number().int() }).nullable(),
      filename: z.string(),
      mime: z.string(),
    }),
  ),

  // Users
  'users.list': query(
    'Users with list-users semantics (search, filter, sort, pagination)',
    z
      .object({
        searchValue: z.string().max(320).optional(),
        searchField: z.enum(['email', 'name']).optional(),
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
      memberships: z.array(
        z.object({ organizationId: z.string(), name: z.string(), slug: z.string(), role: z.string() }),
      ),
      audit: z.array(auditEventSchema),
      people: peopleSchema,
    }),
  ),
  'users.create': mutation(
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
  'users.setRole': mutation(
    'Sets a user role (comma-separated for several)',
    z.object({ userId: id, role: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]) }).strict(),
    z.object({ user: userRowSchema }),
  ),
  'users.ban': mutation(
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
  'users.unban': mutation('Lifts a ban', z.object({ userId: id }).strict(), z.object({ user: userRowSchema })),
  'users.setPassword': mutation(
    "Sets a user's password",
    z.object({ userId: id, newPassword: z.string().min(1).max(1024) }).strict(),
    z.object({ status: z.boolean() }),
  ),
  'users.verifyEmail': mutation(
    "Marks a user's email as verified",
    z.object({ userId: id }).strict(),
    z.object({ user: userRowSchema }),
  ),
  'users.revokeSession': mutation(
    'Revokes one session',
    z.object({ userId: id, sessionId: id }).strict(),
    ok,
  ),
  'users.revokeSessions': mutation('Revokes every session of a user', z.object({ userId: id }).strict(), ok),
  'users.remove': mutation('Deletes a user', z.object({ userId: id }).strict(), ok),
  'users.impersonationLink': mutation(
    'A one-time link that signs the browser in as the user (an impersonation session)',
    z.object({ userId: id }).strict(),
    z.object({ url: z.string(), expiresAt: ms }),
  ),

  // Organizations
  'orgs.list': query(
    'Organizations, searchable by name or slug',
    z
      .object({
        search: z.string().max(200).optional(),
        limit: z.number().int().min(1).max(500).default(25),
        offset: z.number().int().min(0).default(0),
      })
      .strict(),
    z.object({ organizations: z.array(organizationRowSchema), total: z.number() }),
  ),
  'orgs.get': query(
    'An organization with members, teams and invitations',
    z.object({ organizationId: id }).strict(),
    z.object({
      organization: organizationRowSchema,
      members: z.array(memberRowSchema),
      teams: z.array(teamRowSchema),
      invitations: z.array(invitationRowSchema),
    }),
  ),
  'orgs.create': mutation(
    'Creates an organization owned by a user',
    z.object({ name: z.string().min(1).max(200), slug: z.string().min(1).max(200), ownerUserId: id }).strict(),
    z.object({ organization: organizationRowSchema }),
  ),
  'orgs.updateMemberRole': mutation(
    "Changes a member's role",
    z.object({ organizationId: id, memberId: id, role: z.string().min(1).max(200) }).strict(),
    ok,
  ),
  'orgs.removeMember': mutation(
    'Removes a member (the last owner cannot be removed)',
    z.object({ organizationId: id, memberId: id }).strict(),
    ok,
  ),
  'orgs.createTeam': mutation(
    'Creates a team',
    z.object({ organizationId: id, name: z.string().min(1).max(200) }).strict(),
    z.object({ team: teamRowSchema }),
  ),
  'orgs.renameTeam': mutation(
    'Renames a team',
    z.object({ organizationId: id, teamId: id, name: z.string().min(1).max(200) }).strict(),
    z.object({ team: teamRowSchema }),
  ),
  'orgs.removeTeam': mutation(
    'Removes a team',
    z.object({ organizationId: id, teamId: id }).strict(),
    ok,
  ),
  'orgs.invite': mutation(
    'Invites an email address',
    z
      .object({
        organizationId: id,
        email: z.string().min(3).max(320),
        role: z.string().min(1).max(200),
        teamId: id.optional(),
        resend: z.boolean().optional(),
      })
      .strict(),
    z.object({ invitation: invitationRowSchema }),
  ),
  'orgs.cancelInvitation': mutation(
    'Cancels a pending invitation',
    z.object({ organizationId: id, invitationId: id }).strict(),
    ok,
  ),

  // Providers
  'providers.list': query('The social providers and their settings', none, z.array(providerViewSchema)),
  'providers.update': mutation(
    "Saves a provider's settings (a missing clientSecret keeps the stored one)",
    z
      .object({
        id: z.string().min(1).max(40),
        enabled: z.boolean(),
        clientId: z.string().max(500),
        clientSecret: z.string().max(4000).optional(),
        scopes: z.array(z.string().min(1).max(200)).max(50),
        trustedForLinking: z.boolean(),
        overrides: z.record(z.string(), z.string().max(2000)),
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

} satisfies Record<string, OpDef>

/** Core operations and those of every feature folder. */
export const contract = { ...coreContract, ...featureContracts } satisfies Record<string, OpDef>

export type Contract = typeof contract
export type OpName = keyof Contract
export type OpInput<K extends OpName> = z.input<Contract[K]['input']>
export type OpOutput<K extends OpName> = z.output<Contract[K]['output']>

export const opNames = Object.keys(contract) as OpName[]

export const isOpName = (value: unknown): value is OpName => typeof value === 'string' && Object.hasOwn(contract, value)

/** A failure as it crosses the boundary: a stable code, a readable message, field issues for forms. */
export interface PanelFailure {
  code: string
  message: string
  status: number
  /** The input field a domain error concerns (APIError.field): forms show the message beside it. */
  field?: string
  issues?: Array<{ path: string; message: string }>
}

/** What every transport carries back: IPC returns it as is, HTTP maps it onto a status code. */
export type PanelResult<T = unknown> = { ok: true; data: T } | { ok: false; error: PanelFailure }

/** The IPC channel of an operation. */
export const channelOf = (op: OpName): string => `gatehouse:${op}`

/** What preload exposes as `window.gatehouse` (typed from the contract; validated in main). */
export interface GatehouseBridge {
  readonly transport: 'ipc'
  call<K extends OpName>(op: K, input: OpInput<K>): Promise<PanelResult<OpOutput<K>>>
  openExternal(url: string): Promise<void>
}

import { and, desc, eq, like, lte } from 'drizzle-orm'
import { z } from 'zod'
import type { AuthContext } from '../auth/context.js'
import { APIError } from '../auth/errors.js'
import { generateId, randomString } from '../crypto/random.js'
import { verification } from '../db/schema.js'

/** SPEC §9: OAuth state 10 min; state 32 characters; code verifier 128 characters. */
export const STATE_TTL_MS = 600_000
export const STATE_LENGTH = 32
export const CODE_VERIFIER_LENGTH = 128
/** The RFC 7636 unreserved alphabet minus "." and "~", as better-auth draws them. */
const STATE_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
const IDENTIFIER_PREFIX = 'auth-state:'

const stateData = z.object({
  providerId: z.string(),
  callbackURL: z.string(),
  codeVerifier: z.string(),
  errorURL: z.string().optional(),
  newUserURL: z.string().optional(),
  link: z.object({ userId: z.string(), email: z.string() }).optional(),
  requestSignUp: z.boolean().optional(),
  /** A test sign-in started from the control panel: it signs nobody in, it only reports (see testResult). */
  test: z.boolean().optional(),
  expiresAt: z.number(),
})

export type StateData = z.output<typeof stateData>

export const generateState = (): string => randomString(STATE_LENGTH, STATE_ALPHABET)
export const generateCodeVerifier = (): string => randomString(CODE_VERIFIER_LENGTH, STATE_ALPHABET)

function purgeExpired(ctx: AuthContext): void {
  if (ctx.config().verification?.disableCleanup) return
  ctx.db
    .delete(verification)
    .where(and(like(verification.identifier, `${IDENTIFIER_PREFIX}%`), lte(verification.expiresAt, new Date(ctx.clock.now()))))
    .run()
}

/** Stores a new OAuth state as a verification record (SPEC §3, §4) and returns the state string. */
export function createState(ctx: AuthContext, data: Omit<StateData, 'expiresAt'>): string {
  purgeExpired(ctx)
  const state = generateState()
  const now = ctx.clock.now()
  const expiresAt = now + STATE_TTL_MS
  try {
    ctx.db
      .insert(verification)
      .values({
        id: generateId(),
        identifier: `${IDENTIFIER_PREFIX}${state}`,
        value: JSON.stringify({ ...data, expiresAt }),
        expiresAt: new Date(expiresAt),
        createdAt: new Date(now),
        updatedAt: new Date(now),
      })
      .run()
  } catch {
    throw new APIError(500, 'UNABLE_TO_CREATE_VERIFICATION', 'Unable to create verification')
  }
  return state
}

/**
 * Takes a state out of the store: single use, so the record is deleted whether or not it is
 * still valid. Null when unknown, already used, expired or unreadable.
 */
export function consumeState(ctx: AuthContext, state: string): StateData | null {
  const identifier = `${IDENTIFIER_PREFIX}${state}`
  const row = ctx.db
    .select()
    .from(verification)
    .where(eq(verification.identifier, identifier))
    .orderBy(desc(verification.createdAt))
    .get()
  purgeExpired(ctx)
  if (!row) return null
  ctx.db.delete(verification).where(eq(verification.identifier, identifier)).run()
  const now = ctx.clock.now()
  if (row.expiresAt.getTime() <= now) return null
  try {
    const parsed = stateData.safeParse(JSON.parse(row.value))
    if (!parsed.success || parsed.data.expiresAt <= now) return null
    return parsed.data
  } catch {
    return null
  }
}

// ---------------------------------------------------------------- control panel test sign-ins

const TEST_RESULT_PREFIX = 'auth-test-result:'

export const testResultSchema = z.object({
  outcome: z.enum(['success', 'failure']),
  /** The error code the flow ended with (state_mismatch, invalid_code, email_not_found...). */
  code: z.string().nullable(),
  profile: z.object({ id: z.string(), name: z.string(), email: z.string().nullable(), emailVerified: z.boolean() }).nullable(),
})
export type TestResult = z.output<typeof testResultSchema>

/** Whether `state` is a stored test state (read without consuming it: the callback consumes it). */
export function isTestState(ctx: AuthContext, state: string): boolean {
  const row = ctx.db.select().from(verification).where(eq(verification.identifier, `${IDENTIFIER_PREFIX}${state}`)).get()
  if (!row) return false
  try {
    return stateData.safeParse(JSON.parse(row.value)).data?.test === true
  } catch {
    return false
  }
}

/** Keeps the outcome of a test sign-in for the panel to read, as long as a state lives. */
export function recordTestResult(ctx: AuthContext, state: string, result: TestResult): void {
  const now = ctx.clock.now()
  ctx.db
    .insert(verification)
    .values({
      id: generateId(),
      identifier: `${TEST_RESULT_PREFIX}${state}`,
      value: JSON.stringify(result),
      expiresAt: new Date(now + STATE_TTL_MS),
      createdAt: new Date(now),
      updatedAt: new Date(now),
    })
    .run()
}

/** The outcome of a test sign-in, or null while the provider has not called back. */
export function readTestResult(ctx: AuthContext, state: string): TestResult | null {
  const row = ctx.db.select().from(verification).where(eq(verification.identifier, `${TEST_RESULT_PREFIX}${state}`)).get()
  if (!row || row.expiresAt.getTime() <= ctx.clock.now()) return null
  try {
    return testResultSchema.parse(JSON.parse(row.value))
  } catch {
    return null
  }
}

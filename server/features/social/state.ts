import { z } from 'zod'
import type { AuthContext } from '../../core/context.js'
import { generateId, randomString } from '../../crypto/random.js'
import { socialError } from './errors.js'
import { deleteExpiredVerifications, deleteVerification, findVerification, insertVerification } from './store.js'

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
  /** The OpenID nonce sent with the authorization request, which the ID token must echo. */
  idTokenNonce: z.string().optional(),
  /** A test sign-in started from the control panel: it signs nobody in, it only reports (see testResult). */
  test: z.boolean().optional(),
  expiresAt: z.number(),
})

export type StateData = z.output<typeof stateData>

export const generateState = (): string => randomString(STATE_LENGTH, STATE_ALPHABET)
export const generateCodeVerifier = (): string => randomString(CODE_VERIFIER_LENGTH, STATE_ALPHABET)

async function purgeExpired(ctx: AuthContext): Promise<void> {
  if (ctx.config().verification?.disableCleanup) return
  await deleteExpiredVerifications(ctx, IDENTIFIER_PREFIX, new Date(ctx.clock.now()))
}

/** Stores a new OAuth state as a verification record (SPEC §3, §4) and returns the state string. */
export async function createState(ctx: AuthContext, data: Omit<StateData, 'expiresAt'>): Promise<string> {
  await purgeExpired(ctx)
  const state = generateState()
  const now = ctx.clock.now()
  const expiresAt = now + STATE_TTL_MS
  try {
    await insertVerification(ctx, {
      id: generateId(),
      identifier: `${IDENTIFIER_PREFIX}${state}`,
      value: JSON.stringify({ ...data, expiresAt }),
      expiresAt: new Date(expiresAt),
      createdAt: new Date(now),
    })
  } catch {
    throw socialError('UNABLE_TO_CREATE_VERIFICATION')
  }
  return state
}

/**
 * Takes a state out of the store: single use, so the record is deleted whether or not it is
 * still valid. Null when unknown, already used, expired or unreadable.
 */
export async function consumeState(ctx: AuthContext, state: string): Promise<StateData | null> {
  const identifier = `${IDENTIFIER_PREFIX}${state}`
  const row = await findVerification(ctx, identifier)
  await purgeExpired(ctx)
  if (!row) return null
  await deleteVerification(ctx, identifier)
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
export async function isTestState(ctx: AuthContext, state: string): Promise<boolean> {
  const row = await findVerification(ctx, `${IDENTIFIER_PREFIX}${state}`)
  if (!row) return false
  try {
    return stateData.safeParse(JSON.parse(row.value)).data?.test === true
  } catch {
    return false
  }
}

/** Keeps the outcome of a test sign-in for the panel to read, as long as a state lives. */
export async function recordTestResult(ctx: AuthContext, state: string, result: TestResult): Promise<void> {
  const now = ctx.clock.now()
  await insertVerification(ctx, {
    id: generateId(),
    identifier: `${TEST_RESULT_PREFIX}${state}`,
    value: JSON.stringify(result),
    expiresAt: new Date(now + STATE_TTL_MS),
    createdAt: new Date(now),
  })
}

/** The outcome of a test sign-in, or null while the provider has not called back. */
export async function readTestResult(ctx: AuthContext, state: string): Promise<TestResult | null> {
  const row = await findVerification(ctx, `${TEST_RESULT_PREFIX}${state}`)
  if (!row || row.expiresAt.getTime() <= ctx.clock.now()) return null
  try {
    return testResultSchema.parse(JSON.parse(row.value))
  } catch {
    return null
  }
}

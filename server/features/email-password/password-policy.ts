import type { ZxcvbnFactory } from '@zxcvbn-ts/core'
import type { AuthContext } from '../../core/context.js'
import { emailPasswordError } from './errors.js'

/**
 * The configured length of a new password (`emailAndPassword.min/maxPasswordLength`); `field`
 * names the form field checked (newPassword on change and reset).
 */
export function assertPasswordLength(ctx: AuthContext, password: string, field = 'password'): void {
  const { minPasswordLength, maxPasswordLength } = ctx.config().emailAndPassword
  if (password.length < minPasswordLength) throw emailPasswordError(400, 'PASSWORD_TOO_SHORT', field)
  if (password.length > maxPasswordLength) throw emailPasswordError(400, 'PASSWORD_TOO_LONG', field)
}

/**
 * Loaded and built on first use: the dictionaries take ~60 ms and ~13 MB, and most servers never
 * enable this, so start-up does not load them.
 */
let estimator: Promise<ZxcvbnFactory> | null = null

async function loadEstimator(): Promise<ZxcvbnFactory> {
  const [{ ZxcvbnFactory }, { adjacencyGraphs, dictionary }] = await Promise.all([
    import('@zxcvbn-ts/core'),
    import('@zxcvbn-ts/language-common'),
  ])
  return new ZxcvbnFactory({ dictionary: { ...dictionary }, graphs: adjacencyGraphs })
}

/**
 * A password zxcvbn can guess in under a million tries: found in the common-passwords list, a
 * keyboard walk, or a variation of the user's own name or email.
 */
export async function isCommonPassword(password: string, userInputs: string[] = []): Promise<boolean> {
  estimator ??= loadEstimator()
  // zxcvbn's cost grows with length; anything this long is not a dictionary word anyway.
  return (await estimator).check(password.slice(0, 100), userInputs).guessesLog10 < 6
}

/**
 * Every rule a new password must meet: the configured length, and, when
 * `security.rejectCommonPasswords` is on, not being a common or guessable password.
 */
export async function assertPasswordPolicy(
  ctx: AuthContext,
  password: string,
  userInputs: Array<string | null | undefined> = [],
  field = 'password',
): Promise<void> {
  assertPasswordLength(ctx, password, field)
  if (!ctx.config().security.rejectCommonPasswords) return
  const inputs = userInputs.flatMap((v) => (v ? [v, ...v.split(/[@.\s_-]+/)] : [])).filter((v) => v.length > 2)
  if (await isCommonPassword(password, inputs)) throw emailPasswordError(400, 'PASSWORD_TOO_COMMON', field)
}

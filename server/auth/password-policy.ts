import { ZxcvbnFactory } from '@zxcvbn-ts/core'
import { adjacencyGraphs, dictionary } from '@zxcvbn-ts/language-common'
import type { AuthContext } from './context.js'
import { APIError } from './errors.js'
import { assertPasswordLength } from './users.js'

/** Built on first use: the dictionaries take ~60 ms to load and most servers never enable this. */
let estimator: ZxcvbnFactory | null = null

/**
 * A password zxcvbn can guess in under a million tries: found in the common-passwords list, a
 * keyboard walk, or a variation of the user's own name or email.
 */
export function isCommonPassword(password: string, userInputs: string[] = []): boolean {
  estimator ??= new ZxcvbnFactory({ dictionary: { ...dictionary }, graphs: adjacencyGraphs })
  // zxcvbn's cost grows with length; anything this long is not a dictionary word anyway.
  return estimator.check(password.slice(0, 100), userInputs).guessesLog10 < 6
}

/**
 * Every rule a new password must meet: the configured length, and, when
 * `security.rejectCommonPasswords` is on, not being a common or guessable password.
 */
export function assertPasswordPolicy(ctx: AuthContext, password: string, userInputs: Array<string | null | undefined> = []): void {
  assertPasswordLength(ctx, password)
  if (!ctx.config().security.rejectCommonPasswords) return
  const inputs = userInputs.flatMap((v) => (v ? [v, ...v.split(/[@.\s_-]+/)] : [])).filter((v) => v.length > 2)
  if (isCommonPassword(password, inputs)) throw new APIError(400, 'PASSWORD_TOO_COMMON', 'Password is too common. Please choose a less guessable one.')
}

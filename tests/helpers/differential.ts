import { expect } from 'vitest'
import type { Answer } from './http.js'

/**
 * What the differential tests (tests/api/*-differential.test.ts) compare between Gatehouse and a
 * real better-auth answering the same steps: a body's shape (keys and value types, not values),
 * the cookies set or emptied with their attributes, and for errors the code and message.
 */

/** A JSON value's shape: keys and value types, arrays as the set of their items' shapes. */
export function shape(value: unknown): unknown {
  if (value === null) return 'null'
  if (Array.isArray(value)) return [...new Set(value.map((v) => JSON.stringify(shape(v))))].sort()
  if (typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value as object)
        .sort()
        .map((k) => [k, shape((value as Record<string, unknown>)[k])]),
    )
  }
  return typeof value
}

/** Cookie names (a multi-session cookie's token part replaced), whether set or emptied, and their attributes but the date. */
export function cookies(lines: string[]): Record<string, string> {
  const out: Record<string, string> = {}
  for (const line of lines) {
    const [pair = '', ...attrs] = line.split('; ')
    const name = pair.slice(0, pair.indexOf('=')).replace(/_multi-.*/, '_multi-<token>')
    const value = pair.slice(pair.indexOf('=') + 1) === '' ? 'empty' : 'set'
    out[name] = [value, ...attrs.filter((a) => !a.startsWith('Expires='))].join('; ')
  }
  return out
}

/** One answer as compared: status, then code and message (errors) or the body's shape, cookies, and whether set-auth-token came. */
export function summary(a: Answer) {
  const body = a.body as Record<string, unknown> | null
  const error = a.status >= 400
  return {
    status: a.status,
    ...(error ? { code: body?.code, message: body?.message } : { shape: shape(a.body) }),
    cookies: cookies(a.cookies),
    setAuthToken: a.headers.get('set-auth-token') !== null,
  }
}

/** A scenario's steps: each one's summary by its name. */
export type Steps = Record<string, ReturnType<typeof summary>>

/** A scenario's record: `step(name, answer)` awaits the answer, keeps its summary under the name and hands the answer on. */
export function stepRecord(): {
  seen: Steps
  step: (name: string, answer: Promise<Answer>) => Promise<Answer>
} {
  const seen: Steps = {}
  const step = async (name: string, answer: Promise<Answer>) => {
    const a = await answer
    seen[name] = summary(a)
    return a
  }
  return { seen, step }
}

/** Each of better-auth's steps answered alike by Gatehouse (the step named in a failure). */
export function expectStepsAlike(ours: Steps, theirs: Steps): void {
  for (const name of Object.keys(theirs)) expect({ step: name, ...ours[name] }).toEqual({ step: name, ...theirs[name] })
}

/**
 * Runs `scenario` against better-auth, then against Gatehouse; `known` takes better-auth's known
 * differences out of its record (each said where it is given); then each step answered alike.
 */
export async function expectScenarioAlike(
  scenario: (base: string) => Promise<Steps>,
  bases: { theirs: string; ours: string },
  known: (theirs: Steps) => void = () => {},
): Promise<void> {
  const theirs = await scenario(bases.theirs)
  const ours = await scenario(bases.ours)
  known(theirs)
  expectStepsAlike(ours, theirs)
}

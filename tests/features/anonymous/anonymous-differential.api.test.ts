import { anonymous } from 'better-auth/plugins'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type DifferentialPair, startDifferentialPair } from '../../helpers/better-auth-peer.js'
import { expectScenarioAlike, type Steps, stepRecord } from '../../helpers/differential.js'
import { type Answer, HttpClient } from '../../helpers/http.js'

/**
 * Issue 27, anonymous users: the same requests to a real better-auth 1.7.25 with the anonymous
 * plugin and to Gatehouse with `anonymous.enabled`, compared on status, error code and message,
 * body shape and Set-Cookie names and attributes: anonymous sign-in and its refusal, sign-up and
 * sign-in from an anonymous session (link and remove), delete-anonymous-user and its refusals.
 */

const SECRET = 'differential-secret-0123456789-abcdefghij'
const PASSWORD = 'correct horse battery'

let pair: DifferentialPair

beforeAll(async () => {
  pair = await startDifferentialPair(SECRET, [anonymous()], { anonymous: { enabled: true } })
})
afterAll(() => pair?.close())

async function scenario(base: string): Promise<Steps> {
  const { seen, step } = stepRecord()
  const origin = new URL(base).origin
  const email1 = `anon-one${Date.now().toString(36)}@example.com`
  const email2 = `anon-two${Date.now().toString(36)}@example.com`
  const user = (a: Answer) => (a.body as { user: { id: string; email: string; isAnonymous: boolean } }).user

  // An anonymous visitor, then the same browser signs up.
  const visitor = new HttpClient(base, { origin })
  const anon = await step('sign-in anonymous', visitor.post('/sign-in/anonymous'))
  expect(user(anon).isAnonymous).toBe(true)
  const anonToken = anon.headers.get('set-auth-token') as string
  await step('get-session anonymous', visitor.get('/get-session'))
  await step('sign-in anonymous again', visitor.post('/sign-in/anonymous'))
  await step('sign-in anonymous again (empty body)', visitor.post('/sign-in/anonymous', {}))
  await step('sign-up from anonymous', visitor.post('/sign-up/email', { email: email1, password: PASSWORD, name: 'One' }))
  await step('get-session after sign-up', visitor.get('/get-session'))
  await step(
    'get-session by the removed anonymous token',
    new HttpClient(base, { origin, headers: { authorization: `Bearer ${anonToken}` } }).get('/get-session'),
  )
  await step('delete-anonymous-user as an ordinary user', visitor.post('/delete-anonymous-user'))

  // Another visitor signs in to an existing account.
  await new HttpClient(base, { origin }).post('/sign-up/email', { email: email2, password: PASSWORD, name: 'Two' })
  const second = new HttpClient(base, { origin })
  await step('second anonymous', second.post('/sign-in/anonymous'))
  await step('sign-in email from anonymous', second.post('/sign-in/email', { email: email2, password: PASSWORD }))
  await step('get-session after sign-in', second.get('/get-session'))

  // A visitor who leaves.
  const third = new HttpClient(base, { origin })
  await step('third anonymous', third.post('/sign-in/anonymous'))
  await step('delete-anonymous-user', third.post('/delete-anonymous-user'))
  await step('get-session after delete', third.get('/get-session'))
  await step('delete-anonymous-user signed out', new HttpClient(base, { origin }).post('/delete-anonymous-user'))
  return seen
}

describe('the anonymous plugin against better-auth 1.7.25', () => {
  it('answers alike, step by step', async () => {
    await expectScenarioAlike(scenario, pair, (theirs) => {
      // Known difference, core's get-session and not this feature's: for a token whose session is
      // gone, better-auth also expires the session cookies; Gatehouse answers null without Set-Cookie.
      const gone = theirs['get-session by the removed anonymous token']
      if (gone) gone.cookies = {}
    })
  })
})

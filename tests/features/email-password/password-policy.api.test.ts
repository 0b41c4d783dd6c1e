import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { HttpClient, uniqueEmail, statusAndBody } from '../../helpers/http.js'
import { startTestServer, type TestServer } from '../../helpers/server.js'

let server: TestServer
beforeAll(async () => {
  server = await startTestServer()
})
afterAll(() => server.close())

describe('common-password rejection', () => {
  it('is off by default, keeping the spec rules', async () => {
    const res = await new HttpClient(server.base).post('/sign-up/email', { name: 'P', email: uniqueEmail(), password: 'password123' })
    expect(res.status).toBe(200)
  })

  it('refuses dictionary passwords and variations of the user own name when switched on', async () => {
    server.gatehouse.config.update({ security: { rejectCommonPasswords: true } })
    try {
      const client = new HttpClient(server.base)
      for (const password of ['password123', 'qwertyuiop', 'iloveyou1']) {
        const res = await client.post('/sign-up/email', { name: 'P', email: uniqueEmail(), password })
        expect(res.status, password).toBe(400)
        expect(res.body).toEqual({ code: 'PASSWORD_TOO_COMMON', message: 'Password is too common. Please choose a less guessable one.' })
      }
      const own = await client.post('/sign-up/email', { name: 'Marguerite', email: uniqueEmail('marguerite'), password: 'marguerite1' })
      expect(statusAndBody(own)).toEqual([
        400,
        { code: 'PASSWORD_TOO_COMMON', message: 'Password is too common. Please choose a less guessable one.' },
      ])
      const strong = await client.post('/sign-up/email', { name: 'P', email: uniqueEmail(), password: 'violet tractor anchors 42' })
      expect(strong.status).toBe(200)
    } finally {
      server.gatehouse.config.update({ security: { rejectCommonPasswords: false } })
    }
  })
})

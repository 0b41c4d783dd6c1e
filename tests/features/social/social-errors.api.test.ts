import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { BASE_ERROR_CODES } from '@better-auth/core/error'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { SOCIAL_ERRORS, socialError } from '../../../server/features/social/errors.js'
import { HttpClient } from '../../helpers/http.js'
import { startTestServer, type TestServer } from '../../helpers/server.js'

const SOCIAL_DIR = join(import.meta.dirname, '../../../server/features/social')

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sources(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  )
}

describe('the social error catalogue', () => {
  it("spells better-auth's base messages as better-auth 1.7 does", () => {
    for (const code of [
      'PROVIDER_NOT_FOUND',
      'ID_TOKEN_NOT_SUPPORTED',
      'FAILED_TO_GET_USER_INFO',
      'USER_EMAIL_NOT_FOUND',
      'ACCOUNT_NOT_FOUND',
    ] as const) {
      expect([code, SOCIAL_ERRORS[code]]).toEqual([code, BASE_ERROR_CODES[code].message])
    }
    // Measured on the wire (reference/better-auth-wire.md): the ID-token refusal is lower-case.
    expect(SOCIAL_ERRORS.INVALID_TOKEN).toBe('invalid token')
  })

  it('is the only place in the feature that builds an error answer', () => {
    const offenders = sources(SOCIAL_DIR)
      .filter((file) => !file.endsWith('errors.ts'))
      .filter((file) => /new (APIError|PanelError)\(/.test(readFileSync(file, 'utf8')))
    expect(offenders).toEqual([])
  })

  it('names the request field an error concerns', () => {
    expect(socialError('PROVIDER_NOT_FOUND').field).toBe('provider')
    expect(socialError('INVALID_TOKEN').field).toBe('idToken')
    expect(socialError('ACCOUNT_NOT_FOUND').field).toBe('accountId')
  })
})

describe('social errors on the wire', () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startTestServer()
  })
  afterAll(async () => {
    await server?.close()
  })

  it('keeps the body {code, message}: the field stays off the wire', async () => {
    const res = await new HttpClient(server.base).post('/sign-in/social', { provider: 'nope', callbackURL: '/' })
    expect(res.status).toBe(404)
    expect(res.body).toEqual({ code: 'PROVIDER_NOT_FOUND', message: 'Provider not found' })
  })
})

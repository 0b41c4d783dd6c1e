import { Validator } from '@seriousme/openapi-schema-validator'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { allRoutes } from '../../server/routes.js'
import { startTestServer, type TestServer } from '../helpers/server.js'

let server: TestServer
beforeAll(async () => {
  server = await startTestServer({ config: { disabledPaths: ['/sign-up/email'] } })
})
afterAll(() => server.close())

interface Operation {
  operationId: string
  parameters: Array<{ name: string; in: string; required: boolean }>
  requestBody?: { content: Record<string, { schema: { type?: string; properties?: Record<string, unknown>; required?: string[] } }> }
  security: unknown[]
}
type Document = { openapi: string; servers: Array<{ url: string }>; paths: Record<string, Record<string, Operation>> }

const fetchDocument = async (): Promise<Document> => {
  const res = await fetch(`${server.base}/open-api/generate-schema`)
  expect(res.status).toBe(200)
  expect(res.headers.get('content-type')).toContain('application/json')
  return (await res.json()) as Document
}

describe('GET /open-api/generate-schema', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    const document = await fetchDocument()
    expect(document.openapi).toBe('3.1.1')
    expect(document.servers).toEqual([{ url: server.base }])
    const validator = new Validator()
    const result = await validator.validate(document as unknown as Parameters<Validator['validate']>[0])
    expect(result.errors ?? []).toEqual([])
    expect(result.valid).toBe(true)
    expect(validator.version).toBe('3.1')
  })

  it('lists every declared route with its query and body schema, except disabled paths', async () => {
    const document = await fetchDocument()
    const operationIds = new Set<string>()
    expect(allRoutes.length).toBeGreaterThan(60)
    for (const route of allRoutes) {
      const path = route.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}')
      const operation = document.paths[path]?.[route.method.toLowerCase()]
      if (route.path === '/sign-up/email') {
        expect(operation, 'a disabled path is left out').toBeUndefined()
        continue
      }
      expect(operation, `${route.method} ${route.path}`).toBeDefined()
      if (!operation) continue
      expect(operationIds.has(operation.operationId)).toBe(false)
      operationIds.add(operation.operationId)
      expect(operation.security.length > 0).toBe(route.auth !== 'none')
      for (const name of route.path.match(/:([A-Za-z0-9_]+)/g) ?? []) {
        expect(operation.parameters).toContainEqual(expect.objectContaining({ name: name.slice(1), in: 'path', required: true }))
      }
      if (route.query) {
        const schema = z.toJSONSchema(route.query, { io: 'input', unrepresentable: 'any' }) as { properties?: object; required?: string[] }
        for (const name of Object.keys(schema.properties ?? {})) {
          expect(operation.parameters, `${route.path} query ${name}`).toContainEqual(
            expect.objectContaining({ name, in: 'query', required: (schema.required ?? []).includes(name) }),
          )
        }
      }
      if (route.method === 'POST') {
        const body = operation.requestBody?.content['application/json']?.schema
        expect(body, `${route.path} body`).toBeDefined()
        if (route.body) {
          const schema = z.toJSONSchema(route.body, { io: 'input', unrepresentable: 'any' }) as { properties?: object; required?: string[] }
          expect(Object.keys(body?.properties ?? {}).sort()).toEqual(Object.keys(schema.properties ?? {}).sort())
          expect([...(body?.required ?? [])].sort()).toEqual([...(schema.required ?? [])].sort())
        }
      } else {
        expect(operation.requestBody).toBeUndefined()
      }
    }
    // Nothing undeclared: the document has exactly the enabled routes.
    const documented = Object.values(document.paths).reduce((n, methods) => n + Object.keys(methods).length, 0)
    expect(documented).toBe(allRoutes.length - 1)
  })

  it('describes the sign-in body as the client sends it', async () => {
    const document = await fetchDocument()
    const schema = document.paths['/sign-in/email']?.post?.requestBody?.content['application/json']?.schema
    expect(schema?.type).toBe('object')
    expect(schema?.required).toEqual(expect.arrayContaining(['email', 'password']))
    expect(Object.keys(schema?.properties ?? {})).toEqual(expect.arrayContaining(['email', 'password', 'rememberMe', 'callbackURL']))
  })
})

describe('GET /reference', () => {
  it('serves a self-contained HTML page naming every documented path, under the HTML security headers', async () => {
    const res = await fetch(`${server.base}/reference`)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8')
    expect(res.headers.get('content-security-policy')).toContain("default-src 'none'")
    expect(res.headers.get('x-frame-options')).toBe('DENY')
    const html = await res.text()
    expect(html).not.toMatch(/<script|https?:\/\/cdn/i)
    const document = await fetchDocument()
    for (const path of Object.keys(document.paths)) expect(html).toContain(`<code>${path.replace(/&/g, '&amp;')}</code>`)
    expect(html).not.toContain('<code>/sign-up/email</code>')
  })
})

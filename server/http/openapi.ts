import { z } from 'zod'
import { escapeHtml } from '../mail/templates.js'
import type { Route } from './route.js'

/**
 * The OpenAPI 3.1 document of the API, generated from the route declarations: every declared
 * route with its path parameters, its query or body schema (zod → JSON Schema, as the client sends
 * it) and the error shape every endpoint shares. Served at /open-api/generate-schema, the path of
 * better-auth's openAPI plugin, and rendered as a readable page at /reference.
 */

type JsonSchema = Record<string, unknown>

export interface OpenAPIDocument {
  openapi: '3.1.1'
  info: { title: string; description: string; version: string }
  servers: Array<{ url: string }>
  tags: Array<{ name: string; description?: string }>
  security: Array<Record<string, string[]>>
  components: { schemas: Record<string, JsonSchema>; securitySchemes: Record<string, JsonSchema> }
  paths: Record<string, Record<string, OperationObject>>
}

interface ParameterObject {
  name: string
  in: 'path' | 'query'
  required: boolean
  schema: JsonSchema
  description?: string
}

interface OperationObject {
  tags: string[]
  summary: string
  operationId: string
  security: Array<Record<string, string[]>>
  parameters: ParameterObject[]
  requestBody?: { required: boolean; content: Record<string, { schema: JsonSchema }> }
  responses: Record<string, { description: string; content?: Record<string, { schema: JsonSchema }> }>
}

const ERROR_REF = { $ref: '#/components/schemas/Error' }
const OAUTH_ERROR_REF = { $ref: '#/components/schemas/OAuthError' }
const errorResponse = (description: string, oauth = false) => ({
  description,
  content: { 'application/json': { schema: oauth ? OAUTH_ERROR_REF : ERROR_REF } },
})

/** zod → JSON Schema as the client writes it (inputs: defaults optional, transforms by their input). */
function toSchema(schema: z.ZodType): JsonSchema {
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any', target: 'draft-2020-12' }) as JsonSchema
  delete json.$schema
  return json
}

/** `/organization/:id` → `/organization/{id}` and its parameter names. */
function openApiPath(path: string): { path: string; params: string[] } {
  const params: string[] = []
  const converted = path.replace(/:([A-Za-z0-9_]+)/g, (_, name: string) => {
    params.push(name)
    return `{${name}}`
  })
  return { path: converted, params }
}

/** The first path segment names the area (`/organization/create` → Organization); core routes are Default. */
const CORE_SEGMENTS = new Set([
  'sign-up',
  'sign-in',
  'sign-out',
  'get-session',
  'list-sessions',
  'revoke-session',
  'revoke-sessions',
  'revoke-other-sessions',
  'ok',
  'error',
])
function tagOf(path: string): string {
  const segment = path.split('/')[1] ?? ''
  if (!segment || CORE_SEGMENTS.has(segment) || !path.slice(1).includes('/')) return 'Default'
  return segment
    .split('-')
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join(' ')
}

function operationId(method: string, path: string, used: Set<string>): string {
  const words = path
    .split(/[/{}:_-]+/)
    .filter(Boolean)
    .map((word, i) => (i === 0 ? word : word.charAt(0).toUpperCase() + word.slice(1)))
  let id = `${method.toLowerCase()}${words.map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join('')}` || method.toLowerCase()
  for (let n = 2; used.has(id); n++) id = `${id.replace(/\d+$/, '')}${n}`
  used.add(id)
  return id
}

function queryParameters(schema: z.ZodType | undefined, pathParams: string[]): ParameterObject[] {
  const parameters: ParameterObject[] = pathParams.map((name) => ({ name, in: 'path', required: true, schema: { type: 'string' } }))
  if (!schema) return parameters
  const json = toSchema(schema)
  const properties = (json.properties ?? {}) as Record<string, JsonSchema>
  const required = new Set((json.required ?? []) as string[])
  for (const [name, property] of Object.entries(properties)) {
    if (pathParams.includes(name)) continue
    parameters.push({ name, in: 'query', required: required.has(name), schema: property })
  }
  return parameters
}

export interface OpenAPIOptions {
  /** Origin + base path: the server every path is relative to. */
  baseURL: string
  version: string
  disabledPaths: string[]
}

export function buildOpenAPIDocument(routes: Route[], options: OpenAPIOptions): OpenAPIDocument {
  const paths: OpenAPIDocument['paths'] = {}
  const used = new Set<string>()
  const tags = new Set<string>()
  for (const route of routes) {
    if (options.disabledPaths.includes(route.path)) continue
    const { path, params } = openApiPath(route.path)
    const tag = tagOf(route.path)
    tags.add(tag)
    const signedIn = route.auth !== 'none'
    const operation: OperationObject = {
      tags: [tag],
      summary: `${route.method} ${route.path}${route.auth === 'fresh' ? ' (fresh session)' : signedIn ? ' (session)' : ''}`,
      operationId: operationId(route.method, route.path, used),
      security: signedIn ? [{ bearerAuth: [] }, { sessionCookie: [] }] : [],
      parameters: queryParameters(route.query, params),
      responses: {
        '200': { description: 'Success', content: { 'application/json': { schema: {} } } },
        '400': errorResponse('Invalid input or a refused request', route.oauthErrors),
        ...(signedIn ? { '401': errorResponse('No valid session') } : {}),
        '403': errorResponse('Forbidden', route.oauthErrors),
        '429': errorResponse('Too many requests'),
      },
    }
    if (route.method === 'POST') {
      const schema = route.body ? toSchema(route.body) : { type: 'object', properties: {} }
      operation.requestBody = {
        required: route.body !== undefined,
        content: { 'application/json': { schema }, 'application/x-www-form-urlencoded': { schema } },
      }
    }
    paths[path] = { ...paths[path], [route.method.toLowerCase()]: operation }
  }
  return {
    openapi: '3.1.1',
    info: {
      title: 'Gatehouse',
      description: 'API reference of this Gatehouse server (wire-compatible with better-auth).',
      version: options.version,
    },
    servers: [{ url: options.baseURL }],
    tags: [...tags].sort((a, b) => (a === 'Default' ? -1 : b === 'Default' ? 1 : a.localeCompare(b))).map((name) => ({ name })),
    security: [{ bearerAuth: [] }, { sessionCookie: [] }],
    components: {
      schemas: {
        Error: {
          type: 'object',
          properties: { code: { type: 'string' }, message: { type: 'string' } },
          required: ['code', 'message'],
        },
        /** RFC 6749 §5.2: the refusals of OAuth-style endpoints (device authorization). */
        OAuthError: {
          type: 'object',
          properties: { error: { type: 'string' }, error_description: { type: 'string' } },
          required: ['error', 'error_description'],
        },
      },
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: 'The session token (set-auth-token header or the signed cookie value)' },
        sessionCookie: { type: 'apiKey', in: 'cookie', name: 'better-auth.session_token', description: 'The signed session cookie' },
      },
    },
    paths,
  }
}

const METHOD_COLOURS: Record<string, string> = { get: '#1864ab', post: '#2b8a3e' }

function schemaBlock(schema: JsonSchema): string {
  return `<pre>${escapeHtml(JSON.stringify(schema, null, 2))}</pre>`
}

/** A readable, self-contained reference page (no script, no external resource: it works offline on a LAN). */
export function renderReferencePage(document: OpenAPIDocument): string {
  const sections = document.tags
    .map(({ name }) => {
      const operations = Object.entries(document.paths).flatMap(([path, methods]) =>
        Object.entries(methods)
          .filter(([, op]) => op.tags.includes(name))
          .map(([method, op]) => {
            const params = op.parameters.length
              ? `<table><thead><tr><th scope="col">name</th><th scope="col">in</th><th scope="col">required</th><th scope="col">schema</th></tr></thead><tbody>${op.parameters
                  .map(
                    (p) =>
                      `<tr><td><code>${escapeHtml(p.name)}</code></td><td>${p.in}</td><td>${p.required ? 'yes' : 'no'}</td><td><code>${escapeHtml(JSON.stringify(p.schema))}</code></td></tr>`,
                  )
                  .join('')}</tbody></table>`
              : ''
            const body = op.requestBody ? `<h4>Body</h4>${schemaBlock(op.requestBody.content['application/json']?.schema ?? {})}` : ''
            const auth = op.security.length ? '<span class="auth">requires a session</span>' : ''
            return `<section class="op" id="${escapeHtml(op.operationId)}"><h3><span class="method" style="background:${METHOD_COLOURS[method] ?? '#495057'}">${method.toUpperCase()}</span> <code>${escapeHtml(path)}</code> ${auth}</h3>${params}${body}</section>`
          }),
      )
      return `<section><h2>${escapeHtml(name)}</h2>${operations.join('\n')}</section>`
    })
    .join('\n')
  const server = document.servers[0]?.url ?? ''
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(document.info.title)} API reference</title>
<style>
body{font-family:system-ui,sans-serif;margin:0;background:#f8f9fa;color:#212529;line-height:1.5}
main{max-width:60rem;margin:0 auto;padding:2rem}
h2{border-bottom:1px solid #ced4da;padding-bottom:.25rem;margin-top:2.5rem}
.op{background:#fff;border:1px solid #dee2e6;border-radius:6px;padding:.75rem 1rem;margin:1rem 0}
.op h3{font-size:1rem;margin:0 0 .5rem}
.method{color:#fff;border-radius:4px;padding:.1rem .45rem;font-size:.8rem;font-family:ui-monospace,monospace}
.auth{font-weight:normal;font-size:.85rem;color:#495057}
pre{background:#f1f3f5;padding:.75rem;border-radius:4px;overflow:auto;font-size:.8rem}
table{border-collapse:collapse;font-size:.85rem;margin:.5rem 0}
td,th{border:1px solid #dee2e6;padding:.25rem .5rem;text-align:left;vertical-align:top}
a{color:#1864ab}
</style>
</head>
<body>
<main>
<h1>${escapeHtml(document.info.title)} API reference</h1>
<p>${escapeHtml(document.info.description)} Server: <code>${escapeHtml(server)}</code>, version ${escapeHtml(document.info.version)}.
Errors are <code>{"code", "message"}</code>. The machine-readable document: <a href="open-api/generate-schema">open-api/generate-schema</a>.</p>
${sections}
</main>
</body>
</html>`
}

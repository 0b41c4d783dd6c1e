import { packageVersion } from '../../version.js'
import { HTML_SECURITY_HEADERS } from '../error-page.js'
import { buildOpenAPIDocument, type OpenAPIDocument, renderReferencePage } from '../openapi.js'
import { defineRoute, type Route, TextBody } from '../route.js'

/**
 * The two paths of better-auth's openAPI plugin. `routes` is read at request time: the list it
 * describes includes these two routes themselves, and routes/index.ts builds it after them.
 */
export function openApiRoutes(routes: () => Route[]): Route[] {
  const version = packageVersion()
  const documentFor = (baseURL: string, disabledPaths: string[]): OpenAPIDocument =>
    buildOpenAPIDocument(routes(), { baseURL, version, disabledPaths })
  return [
    defineRoute({
      method: 'GET',
      path: '/open-api/generate-schema',
      handler: ({ ctx }) => documentFor(ctx.baseURL, ctx.config().disabledPaths),
    }),
    defineRoute({
      method: 'GET',
      path: '/reference',
      handler: ({ ctx, response }) => {
        for (const [name, value] of Object.entries(HTML_SECURITY_HEADERS)) response.headers.set(name, value)
        return new TextBody(renderReferencePage(documentFor(ctx.baseURL, ctx.config().disabledPaths)), 'text/html; charset=utf-8')
      },
    }),
  ]
}

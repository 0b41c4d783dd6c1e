import { createServer, type Server } from 'node:http'
import type { AuthContext } from '../../core/context.js'
import { defineFeature } from '../../feature.js'
import { configSections, parseMetricsAddress } from './config.js'
import { metricsErrors } from './errors.js'

/**
 * prom-client and its default collectors are loaded only when metrics are on, as the start hook
 * begins (issue 39: an off feature loads nothing at start); `ready` awaits the registry, so
 * `listen()` returns with every event counted from the first request on.
 */
/** Where each server's metrics listener is bound, once it is (tests and the start-up line read it). */
const bound = new WeakMap<AuthContext, Promise<{ host: string; port: number }>>()

/** The metrics listener's address, once bound; undefined when metrics are off. */
export function metricsListening(ctx: AuthContext): Promise<{ host: string; port: number }> | undefined {
  return bound.get(ctx)
}

/**
 * Prometheus metrics (issue 32, docs/OBSERVABILITY.md): with `metrics.enabled`, the start hook
 * puts a registry behind `ctx.events` (core/events.ts) and opens a second listener on
 * `metrics.address` serving `GET /metrics` only, so the API's port never exposes them. Off, the
 * context keeps `noEvents` and nothing is counted.
 */
export const metricsFeature = defineFeature({
  id: 'metrics',
  config: configSections,
  errors: metricsErrors,
  start({ ctx, logger }) {
    const conf = ctx.config().metrics
    if (!conf.enabled) return undefined
    let stopped = false
    let server: Server | undefined
    const registry = import('./registry.js').then(({ createMetrics }) => {
      const metrics = createMetrics(ctx)
      ctx.events = metrics.events
      return metrics.registry
    })
    const listening = registry.then((registry) => {
      if (stopped) throw new Error('metrics stopped before their listener opened')
      const opened = createServer((req, res) => {
        const path = req.url?.split('?')[0]
        if (req.method !== 'GET' || path !== '/metrics') {
          res.writeHead(404, { 'content-type': 'application/json' })
          res.end(JSON.stringify(metricsErrors.NOT_FOUND))
          return
        }
        registry.metrics().then(
          (text) => {
            res.writeHead(200, { 'content-type': registry.contentType })
            res.end(text)
          },
          (error: unknown) => {
            logger.error('metrics scrape failed:', error)
            res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' })
            res.end('scrape failed\n')
          },
        )
      })
      server = opened
      const { host, port } = parseMetricsAddress(conf.address)
      return new Promise<{ host: string; port: number }>((resolve, reject) => {
        opened.once('error', reject)
        opened.listen(port, host, () => {
          opened.off('error', reject)
          const address = opened.address()
          resolve({ host, port: address && typeof address === 'object' ? address.port : port })
        })
      })
    })
    listening.then(
      (at) => logger.info(`Metrics listening on http://${at.host.includes(':') ? `[${at.host}]` : at.host}:${at.port}/metrics`),
      (error: NodeJS.ErrnoException) => {
        if (!stopped)
          logger.error(`metrics listener not started on ${conf.address} (${error.code ?? error.message}); choose another metrics.address`)
      },
    )
    bound.set(ctx, listening)
    return () =>
      new Promise<void>((resolve) => {
        stopped = true
        if (!server) return resolve()
        server.closeAllConnections()
        server.close(() => resolve())
        if (!server.listening) resolve()
      })
  },
  // The registry behind ctx.events and the listener (or the line saying why it is not): as when both were synchronous.
  ready: (ctx) =>
    bound.get(ctx)?.then(
      () => undefined,
      () => undefined,
    ),
})

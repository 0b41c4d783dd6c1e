import { createServer } from 'node:http'
import type { Socket } from 'node:net'
import type { Registry } from 'prom-client'
import type { GatehouseConfig } from '../../config/schema.js'
import type { AuthContext } from '../../core/context.js'
import { type BoundListeners, defineFeature, hostPort, ListenerRefusal, type ListenerState } from '../../feature.js'
import { ListenerSwitch } from '../../core/listener-switch.js'
import type { Logger } from '../../log.js'
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
 * context keeps `noEvents` and nothing is counted. The switch and the address apply live (issue 50):
 * a new address is bound before the old listener closes, and the panel's save binds it first
 * (`bindListeners`), refused with the reason when it cannot be bound.
 */
export const metricsFeature = defineFeature({
  id: 'metrics',
  config: configSections,
  errors: metricsErrors,
  start({ ctx, logger, onConfigChange }) {
    const metricsListeners = metricsListenersOf(ctx, logger)
    controls.set(ctx, {
      bind: (next) => metricsListeners.switch.bindForSave(next.metrics),
      states: () => metricsListeners.states(),
    })
    const first = metricsListeners.switch.start(ctx.config().metrics)?.then((listener) => listener.at)
    if (first) {
      first.catch((error: Error) => {
        if (!metricsListeners.stopped) logger.error(error.message)
      })
      bound.set(ctx, first)
    }
    const unsubscribe = onConfigChange?.(() => metricsListeners.switch.apply())
    return async () => {
      metricsListeners.stopped = true
      unsubscribe?.()
      await metricsListeners.switch.stop()
      controls.delete(ctx)
    }
  },
  // The registry behind ctx.events and the listener (or the line saying why it is not): as when both were synchronous.
  ready: (ctx) =>
    bound.get(ctx)?.then(
      () => undefined,
      () => undefined,
    ),
  bindListeners: async (ctx, next) => controls.get(ctx)?.bind(next),
  listeners: (ctx) => controls.get(ctx)?.states() ?? [],
})

/** The metrics listener on one address, with its open connections. */
interface MetricsListener {
  address: string
  at: { host: string; port: number }
  sockets: Set<Socket>
  close(): Promise<void>
}

const controls = new WeakMap<AuthContext, { bind(next: GatehouseConfig): Promise<BoundListeners | undefined>; states(): ListenerState[] }>()

/**
 * The metrics listener of one server, applied live through a ListenerSwitch (keyed by the address,
 * null when metrics are off); the registry behind `ctx.events` is loaded when metrics are first on
 * (at start, or switched on live), so events are counted from then.
 */
function metricsListenersOf(ctx: AuthContext, logger: Logger) {
  let registry: Promise<Registry> | null = null
  const registryOf = () =>
    (registry ??= import('./registry.js').then(({ createMetrics }) => {
      const metrics = createMetrics(ctx)
      ctx.events = metrics.events
      return metrics.registry
    }))
  let lastError: { message: string; at: number } | null = null
  const self = {
    /** Set as the start hook's stop begins: a listener not yet open then is not opened. */
    stopped: false,
    switch: new ListenerSwitch<GatehouseConfig['metrics'], MetricsListener>(
      {
        inEffect: () => ctx.config().metrics,
        wantedOf: (conf) => (conf.enabled ? conf.address : null),
        open: async (conf) => {
          try {
            if (self.stopped) throw new Error('metrics stopped before their listener opened')
            return await openListener(conf.address, await registryOf(), logger)
          } catch (error) {
            const refusal =
              error instanceof ListenerRefusal
                ? error
                : new ListenerRefusal('metrics.address', `metrics.address: ${(error as Error).message}`)
            lastError = { message: refusal.message, at: ctx.clock.now() }
            throw refusal
          }
        },
        serving: (next) => {
          if (next) {
            bound.set(ctx, Promise.resolve(next.at))
            logger.info(`Metrics listening on http://${hostPort(next.at)}/metrics`)
          } else bound.delete(ctx)
        },
        keptServing: '(the metrics listener keeps serving on its address)',
      },
      logger,
    ),
    /** The listener's state for the panel (`listeners.state`). */
    states(): ListenerState[] {
      const conf = ctx.config().metrics
      const running = self.switch.running
      return [
        {
          name: 'metrics',
          field: 'metrics.address',
          state: running ? 'listening' : conf.enabled && lastError ? 'failed' : 'stopped',
          address: running ? hostPort(running.at) : conf.enabled ? conf.address : null,
          connections: running?.sockets.size ?? 0,
          lastError,
        },
      ]
    },
  }
  return self
}

/** Serves `GET /metrics` from `registry` on `address`; rejects with a ListenerRefusal when it cannot be bound. */
function openListener(address: string, registry: Registry, logger: Logger): Promise<MetricsListener> {
  const server = createServer((req, res) => {
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
  const sockets = new Set<Socket>()
  server.on('connection', (socket: Socket) => {
    sockets.add(socket)
    socket.once('close', () => sockets.delete(socket))
  })
  const { host, port } = parseMetricsAddress(address)
  return new Promise((resolve, reject) => {
    const failed = (error: NodeJS.ErrnoException) =>
      reject(
        new ListenerRefusal(
          'metrics.address',
          `metrics.address: cannot listen on ${address} (${error.code ?? error.message}); choose another metrics.address`,
        ),
      )
    server.once('error', failed)
    server.listen(port, host, () => {
      server.off('error', failed)
      const bound = server.address()
      resolve({
        address,
        at: { host, port: bound && typeof bound === 'object' ? bound.port : port },
        sockets,
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections()
            server.close(() => done())
          }),
      })
    })
  })
}

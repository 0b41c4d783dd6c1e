/**
 * Requests by route template, method and status, and their durations by route: counted on the
 * hot path into plain numbers held per declared route (created once, at a route's first request),
 * and turned into Prometheus samples only when scraped. A request allocates nothing here: no
 * label object, no label string, no hash (prom-client's `inc(labels)` builds a hash string per
 * call).
 */

/** Histogram bounds, in seconds. */
export const DURATION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] as const

/** The label of a path no declared route takes (unknown paths, the OIDC provider's mounted ones). */
export const UNMATCHED_ROUTE = '(unmatched)'

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'])

class RouteStats {
  /** Status code → answers. */
  readonly byStatus = new Map<number, number>()
  /** Answers per bucket (not cumulative), the last one past the highest bound. */
  readonly buckets = new Float64Array(DURATION_BUCKETS.length + 1)
  sum = 0
  count = 0

  constructor(
    readonly route: string,
    readonly method: string,
  ) {}
}

interface Sample {
  value: number
  labels: Record<string, string | number>
  metricName?: string
}

export class RequestStats {
  private readonly byRoute = new Map<object, RouteStats>()
  private readonly unmatched = new Map<string, RouteStats>()
  private readonly all: RouteStats[] = []

  record(route: { path: string; method: string } | null, method: string, status: number, ms: number): void {
    let stats = route ? this.byRoute.get(route) : this.unmatched.get(method)
    if (stats === undefined) stats = this.create(route, method)
    stats.byStatus.set(status, (stats.byStatus.get(status) ?? 0) + 1)
    const seconds = ms / 1000
    stats.sum += seconds
    stats.count++
    let i = 0
    while (i < DURATION_BUCKETS.length && seconds > (DURATION_BUCKETS[i] as number)) i++
    stats.buckets[i] = (stats.buckets[i] as number) + 1
  }

  private create(route: { path: string; method: string } | null, method: string): RouteStats {
    if (route) {
      const stats = new RouteStats(route.path, route.method)
      this.byRoute.set(route, stats)
      this.all.push(stats)
      return stats
    }
    // Any method string a client invents would be a new series: unknown ones share one label.
    const label = METHODS.has(method) ? method : 'OTHER'
    let stats = this.unmatched.get(label)
    if (!stats) {
      stats = new RouteStats(UNMATCHED_ROUTE, label)
      this.all.push(stats)
    }
    this.unmatched.set(method, stats)
    // Invented methods map to OTHER without growing the map past a bound.
    if (this.unmatched.size > 64) this.unmatched.clear()
    return stats
  }

  /** `gatehouse_http_requests_total` as a prom-client metric (its `get` is called per scrape). */
  counterMetric() {
    const name = 'gatehouse_http_requests_total'
    const help = 'HTTP requests answered by the API, by route template, method and status'
    return {
      name,
      help,
      type: 'counter',
      get: () => {
        const values: Sample[] = []
        for (const stats of this.all)
          for (const [status, value] of stats.byStatus)
            values.push({ value, labels: { route: stats.route, method: stats.method, status: String(status) } })
        return { name, help, type: 'counter', values, aggregator: 'sum' }
      },
    }
  }

  /** `gatehouse_http_request_duration_seconds` as a prom-client histogram. */
  histogramMetric() {
    const name = 'gatehouse_http_request_duration_seconds'
    const help = 'Time from the start of the runner to the answer, by route template and method'
    return {
      name,
      help,
      type: 'histogram',
      get: () => {
        const values: Sample[] = []
        for (const stats of this.all) {
          const labels = { route: stats.route, method: stats.method }
          let cumulative = 0
          DURATION_BUCKETS.forEach((le, i) => {
            cumulative += stats.buckets[i] as number
            values.push({ value: cumulative, labels: { ...labels, le }, metricName: `${name}_bucket` })
          })
          values.push({ value: stats.count, labels: { ...labels, le: '+Inf' }, metricName: `${name}_bucket` })
          values.push({ value: stats.sum, labels, metricName: `${name}_sum` })
          values.push({ value: stats.count, labels, metricName: `${name}_count` })
        }
        return { name, help, type: 'histogram', values, aggregator: 'sum' }
      },
    }
  }
}

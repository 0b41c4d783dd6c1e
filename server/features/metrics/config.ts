import { z } from 'zod'

/** `host:port`, the host an IPv4 address, a name, or an IPv6 address in brackets (`[::1]:9959`). */
export const METRICS_ADDRESS = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/

/**
 * `metrics.*`: the Prometheus listener (docs/OBSERVABILITY.md). Off by default; when on, a second
 * listener serves `GET /metrics` on its own address (never on the API's port). A change applies
 * live: the new address is bound before the old listener closes (a save that cannot bind it is
 * refused). `--metrics-address` / GATEHOUSE_METRICS_ADDRESS set the address and switch it on.
 */
export const metricsConfig = z
  .object({
    enabled: z.boolean().default(false),
    address: z
      .string()
      .regex(METRICS_ADDRESS, 'must be host:port, e.g. 127.0.0.1:9959 or [::1]:9959')
      .refine((value) => Number(METRICS_ADDRESS.exec(value)?.[2]) <= 65535, 'the port must be 0-65535')
      .default('127.0.0.1:9959'),
  })
  .prefault({})

/** The host and port of a valid `metrics.address`. */
export function parseMetricsAddress(address: string): { host: string; port: number } {
  const match = METRICS_ADDRESS.exec(address)
  if (!match?.[1] || !match[2]) throw new Error(`invalid metrics address ${address}`)
  return { host: match[1].replace(/^\[|\]$/g, ''), port: Number(match[2]) }
}

/** The config sections this feature owns, by path (its defineFeature declares them; bin/gen-features.js mounts them). */
export const configSections = { metrics: metricsConfig }

import { z } from 'zod'
import { mutation, none, query } from '../../panel-frame/op.js'

/** The Network section's operations (zod only: shared with the renderer). */
const settings = z.object({
  listen: z.enum(['loopback', 'lan']),
  interface: z.string().min(1).max(100).nullable(),
  port: z.number().int().min(1).max(65535),
  baseURL: z
    .url({ protocol: /^https?$/, error: 'a base URL is an http(s) URL' })
    .max(2000)
    .nullable(),
})

const override = z.object({ value: z.string(), source: z.string() })

export const networkContract = {
  'network.get': query(
    'Where the API listens, the stored network settings, start-up overrides, interfaces and proposed base URLs',
    none,
    z.object({
      stored: settings,
      /** What the listener uses now. */
      current: z.object({ host: z.string(), port: z.number(), apiURL: z.string(), listening: z.boolean() }),
      /** Values fixed by flags or GATEHOUSE_* variables (they win over the panel). */
      overrides: z.object({ host: override.optional(), port: override.optional(), baseURL: override.optional() }),
      interfaces: z.array(z.object({ name: z.string(), address: z.string(), family: z.enum(['IPv4', 'IPv6']), internal: z.boolean() })),
      proposals: z.array(z.object({ url: z.string(), source: z.enum(['address', 'hostname']), interface: z.string().optional() })),
      canSave: z.boolean(),
    }),
  ),
  'network.apply': mutation(
    'Saves the network settings and restarts the API listener only; a taken port is refused with the next free one',
    settings.strict(),
    z.discriminatedUnion('applied', [
      z.object({ applied: z.literal(true), apiURL: z.string(), host: z.string(), port: z.number() }),
      z.object({ applied: z.literal(false), code: z.literal('PORT_IN_USE'), message: z.string(), suggestedPort: z.number().nullable() }),
    ]),
  ),
  'network.check': query(
    'Calls <base URL>/api/auth/ok from this machine to tell whether the URL reaches this Gatehouse',
    z.object({ baseURL: z.url({ protocol: /^https?$/, error: 'a base URL is an http(s) URL' }).max(2000) }).strict(),
    z.object({ url: z.string(), reachable: z.boolean(), status: z.number().nullable(), message: z.string() }),
  ),
} as const

import { randomBytes } from 'node:crypto'
import type { GatehouseConfig } from '../config/schema.js'
import { isTrustedProxy } from './client-ip.js'

/** What a forwarded X-Request-Id may be: 1-128 characters a log line and a header carry as they are. */
const ACCEPTED = /^[A-Za-z0-9._:@/+=-]{1,128}$/

/** This process's prefix: ids from several instances behind one balancer never collide. */
const PREFIX = `${randomBytes(6).toString('base64url')}-`
let sequence = 0

/** A fresh request id: the process prefix and a counter (no randomness per request). */
export const newRequestId = (): string => PREFIX + (++sequence).toString(36)

/**
 * The id of a request (its X-Request-Id answer header, log lines and audit events): the one a
 * trusted proxy (`advanced.ipAddress.trustedProxies`) forwarded in X-Request-Id when it is
 * well-formed, else a new one. A client that is not a trusted proxy cannot choose its id.
 */
export function requestIdOf(request: { ip?: string; headers: Headers }, conf: GatehouseConfig['advanced']['ipAddress']): string {
  const forwarded = request.headers.get('x-request-id')
  if (forwarded === null) return newRequestId()
  // The peer is worked out only for a request that forwards an id (srvx resolves it on first use).
  const peer = request.ip
  if (ACCEPTED.test(forwarded) && peer !== undefined && isTrustedProxy(peer, conf.trustedProxies)) return forwarded
  return newRequestId()
}

import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Clock } from '../../server/auth/context.js'
import type { GatehouseConfigInput } from '../../server/config/schema.js'
import { createGatehouse, type Gatehouse, type Logger } from '../../server/gatehouse.js'

/** A clock the test moves by hand: expiry is tested without sleeping. */
export class TestClock implements Clock {
  constructor(private t = Date.UTC(2026, 0, 1, 12, 0, 0)) {}
  now(): number {
    return this.t
  }
  advance(ms: number): void {
    this.t += ms
  }
  advanceSeconds(s: number): void {
    this.t += s * 1000
  }
}

export const silentLogger: Logger & { errors: unknown[]; warnings: string[] } = {
  errors: [],
  warnings: [],
  info() {},
  warn(m) {
    silentLogger.warnings.push(m)
  },
  error(m, e) {
    silentLogger.errors.push(e ?? m)
  },
}

export interface TestServer {
  /** http://127.0.0.1:PORT */
  origin: string
  /** origin + /api/auth */
  base: string
  dataDir: string
  clock: TestClock
  gatehouse: Gatehouse
  close(): Promise<void>
}

export interface TestServerOptions {
  config?: GatehouseConfigInput
  clock?: TestClock
  secret?: string
  dataDir?: string
  /** Keep the data directory after close (restart tests). */
  keepData?: boolean
}

/** The real server on a loopback port with a real SQLite file in a temporary directory. */
export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'gatehouse-test-'))
  const clock = options.clock ?? new TestClock()
  const gatehouse = createGatehouse({
    dataDir,
    port: 0,
    host: '127.0.0.1',
    secret: options.secret ?? 'test-secret-0123456789-abcdefghijkl',
    config: { rateLimit: { enabled: false }, ...options.config },
    clock,
    logger: silentLogger,
  })
  const base = await gatehouse.listen()
  const origin = new URL(base).origin
  return {
    origin,
    base,
    dataDir,
    clock,
    gatehouse,
    async close() {
      await gatehouse.close()
      if (!options.keepData) rmSync(dataDir, { recursive: true, force: true })
    },
  }
}

import { createConnection, type Socket } from 'node:net'
import { BerReader } from '@ldapjs/asn1'
import { BindRequest } from '@ldapjs/messages'
import { systemActor } from '../../../server/features/admin/index.js'
import { adminUpdateUser } from '../../../server/features/admin/users.js'
import type { AuthContext } from '../../../server/core/context.js'
import { user } from '../../../server/db/schema.js'
import { frameLength } from '../../../server/features/ldap/wire.js'
import type { TestServer } from '../../helpers/server.js'
import { BASE, person, type Person } from './helpers.js'

/** A person as helpers.person makes them, with a verified email (unverified people may be hidden from the directory). */
export async function verifiedPerson(server: TestServer, username: string, name: string, role?: string): Promise<Person> {
  const made = await person(server, username, name, role)
  await adminUpdateUser(server.gatehouse.ctx, systemActor('cli'), { userId: made.id, data: { emailVerified: true } }, null)
  return made
}

export const dnOf = (uid: string) => `uid=${uid},ou=people,${BASE}`

/** A message the server sent, read from the raw bytes: its id, operation tag, result code, diagnostic and (extended) name. */
export interface Answer {
  id: number
  tag: number
  code: number
  diagnostic: string
  name: string | null
}

function readAnswer(frame: Buffer): Answer {
  const ber = new BerReader(frame)
  ber.readSequence(0x30)
  const id = ber.readInt()
  const tag = ber.peek() as number
  if (tag === 0x64) return { id, tag, code: -1, diagnostic: '', name: null }
  ber.readSequence(tag)
  const end = ber.offset + ber.length
  const code = ber.readEnumeration()
  ber.readString()
  const diagnostic = ber.readString() ?? ''
  const name = ber.offset < end && ber.peek() === 0x8a ? ber.readString(0x8a) : null
  return { id, tag, code, diagnostic, name }
}

/** A raw LDAP connection: send bytes, collect every answer, know when the server closed it. */
export class RawConnection {
  readonly answers: Answer[] = []
  closed = false
  private buffer = Buffer.alloc(0)
  private waiters: Array<() => void> = []
  private constructor(readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.buffer = Buffer.concat([this.buffer, chunk])
      for (let length = frameLength(this.buffer, 64 * 1024 * 1024); length > 0; length = frameLength(this.buffer, 64 * 1024 * 1024)) {
        this.answers.push(readAnswer(this.buffer.subarray(0, length)))
        this.buffer = this.buffer.subarray(length)
      }
      this.wake()
    })
    socket.on('error', () => {})
    socket.on('close', () => {
      this.closed = true
      this.wake()
    })
  }

  static open(port: number, localAddress?: string): Promise<RawConnection> {
    return new Promise((resolve, reject) => {
      const socket = createConnection({ host: '127.0.0.1', port, ...(localAddress ? { localAddress } : {}) })
      socket.once('error', reject)
      socket.once('connect', () => resolve(new RawConnection(socket)))
    })
  }

  private wake(): void {
    for (const waiter of this.waiters.splice(0)) waiter()
  }

  /** Waits (at most `ms`) until `done` holds. */
  async until(done: () => boolean, ms = 10_000): Promise<void> {
    const deadline = Date.now() + ms
    while (!done()) {
      if (Date.now() > deadline) throw new Error(`timed out; answers: ${JSON.stringify(this.answers)}; closed: ${this.closed}`)
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve)
        setTimeout(resolve, 100)
      })
    }
  }

  send(bytes: Buffer): void {
    this.socket.write(bytes)
  }

  /** A simple bind; waits for its answer (a password hash: up to a minute on a busy machine). */
  async bind(id: number, dn: string, password: string): Promise<Answer> {
    this.send(new BindRequest({ messageId: id, name: dn, credentials: password }).toBer().buffer as Buffer)
    await this.until(() => this.answers.some((a) => a.id === id) || this.closed, 60_000)
    const answer = this.answers.find((a) => a.id === id)
    if (!answer) throw new Error('closed before the bind was answered')
    return answer
  }

  destroy(): void {
    this.socket.destroy()
  }
}

/** GET /api/auth/ok on the test server: its status. */
export async function ok(server: TestServer): Promise<number> {
  return (await fetch(`${server.base}/ok`)).status
}

/**
 * `count` people inserted through the store in one transaction per chunk of 500 (verified emails:
 * they show in the directory), three to a creation time so the order's tie-break (the id) is exercised.
 */
export async function seedPeople(ctx: AuthContext, count: number, prefix: string): Promise<void> {
  const start = Date.UTC(2026, 0, 1)
  for (let from = 0; from < count; from += 500) {
    const rows = Array.from({ length: Math.min(500, count - from) }, (_, k) => {
      const i = from + k
      return {
        id: `${prefix}-${String(i).padStart(6, '0')}`,
        name: `Seeded Person ${i}`,
        email: `${prefix}${i}@example.com`,
        emailVerified: true,
        username: `${prefix}${i}`,
        role: 'user',
        createdAt: new Date(start + Math.floor(i / 3) * 1000),
        updatedAt: new Date(start),
      }
    })
    await ctx.storage.transaction(async () => {
      await ctx.db.insert(user).values(rows)
    })
  }
}

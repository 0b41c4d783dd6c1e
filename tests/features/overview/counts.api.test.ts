import { eq } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { user } from '../../../server/db/schema.js'
import { banUser, systemActor } from '../../../server/features/admin/index.js'
import type { PanelService } from '../../../server/panel/service.js'
import { signUp } from '../../helpers/http.js'
import { panelServiceOf } from '../../helpers/panel-session.js'
import { startTestServer, type TestServer } from '../../helpers/server.js'

/**
 * The overview's banned count is the ban rule (core/bans.ts, issue 51 §2): a ban counts until its
 * expiry, so a lapsed one (cleared only at the person's next sign-in) is not counted, while the row
 * still says banned. Before, the overview counted every `banned` row. Both engines.
 */

let server: TestServer
let panel: PanelService

beforeAll(async () => {
  server = await startTestServer()
  panel = panelServiceOf(server)
})
afterAll(() => server?.close())

async function bannedUsers(): Promise<number> {
  const result = await panel.dispatch('overview.get', { range: 'hours' })
  if (!result.ok) throw new Error(result.error.message)
  return (result.data as { counts: { bannedUsers: number } }).counts.bannedUsers
}

describe('the overview counts bans in force now', () => {
  it('counts a ban until its expiry, and one without expiry until it is lifted', async () => {
    const { ctx } = server.gatehouse
    const ban = async (banExpiresIn?: number) => {
      const person = await signUp(server.base)
      await banUser(ctx, systemActor('cli'), { userId: person.user.id, banExpiresIn }, null)
      return person.user.id
    }
    const before = await bannedUsers()
    await ban()
    await ban(3600)
    const short = await ban(60)
    expect(await bannedUsers()).toBe(before + 3)

    server.clock.advanceSeconds(61)
    // Lapsed, not yet cleared: the row still says banned.
    const row = (await ctx.db.select({ banned: user.banned }).from(user).where(eq(user.id, short)))[0]
    expect(row?.banned).toBe(true)
    expect(await bannedUsers()).toBe(before + 2)

    // A ban whose expiry is this instant has lapsed (bannedNow: the expiry must be ahead).
    const atNow = await ban(3600)
    await ctx.db
      .update(user)
      .set({ banExpires: new Date(server.clock.now()) })
      .where(eq(user.id, atNow))
    expect(await bannedUsers()).toBe(before + 2)

    server.clock.advanceSeconds(3600)
    expect(await bannedUsers()).toBe(before + 1)
  })
})

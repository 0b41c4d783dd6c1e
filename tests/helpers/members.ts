import { join } from 'node:path'
import Database from 'better-sqlite3'
import { adminClient, usernameClient } from 'better-auth/client/plugins'
import { setEmailVerified, setRole, systemActor } from '../../server/features/admin/index.js'
import { CookieJar, type HttpClient, type SignedUp, signUp, uniqueEmail } from './http.js'
import { officialClient as official } from './official-client.js'
import type { TestServer } from './server.js'

/** The official better-auth client with the username and admin plugins, cookies in a jar, Origin sent. */
export function officialClient(server: TestServer, jar = new CookieJar()) {
  /** Set-Cookie lines of the last response. */
  const last = { setCookies: [] as string[] }
  const { client } = official(server, {
    jar,
    plugins: [usernameClient(), adminClient()],
    fetch: {
      redirect: 'manual',
      onResponse: (response) => {
        last.setCookies = response.headers.getSetCookie()
      },
    },
  })
  return { client, jar, last }
}

export type Official = ReturnType<typeof officialClient>

export interface Member extends Official {
  id: string
  email: string
  password: string
  name: string
}

/** Signs a new user up through the official client; the client keeps the session. */
export async function member(server: TestServer, extra: { name?: string; username?: string; email?: string } = {}): Promise<Member> {
  const official = officialClient(server)
  const email = extra.email ?? uniqueEmail('adm')
  const password = 'correct horse battery'
  const name = extra.name ?? 'Member'
  const res = await official.client.signUp.email({ email, password, name, ...(extra.username ? { username: extra.username } : {}) })
  if (res.error || !res.data) throw new Error(`sign-up failed: ${JSON.stringify(res.error)}`)
  return { ...official, id: res.data.user.id, email, password, name }
}

/** A signed-in administrator: a member promoted by the operator (as `gatehouse user set-role` does). */
export async function administrator(server: TestServer, role = 'admin'): Promise<Member> {
  const m = await member(server, { name: 'Admin' })
  await setRole(server.gatehouse.ctx, systemActor('cli'), { userId: m.id, role }, null)
  return m
}

/**
 * A signed-up person whose email is verified, as an administrator marks it (the panel's "mark email
 * verified"): the faces (forward auth, SAML, LDAP, OIDC) vouch only for verified people while
 * `identity.requireVerifiedEmail` is on (the default). The one helper for it: suites of those faces
 * sign their people up through here, `signUp`'s overrides as they are.
 */
export async function verifiedSignUp(server: TestServer, overrides: Record<string, unknown> = {}): Promise<SignedUp> {
  const up = await signUp(server.base, overrides)
  await markVerified(server, up.user.id)
  return up
}

/** Marks a person signed up some other way (another origin, the official client) verified, as verifiedSignUp does. */
export async function markVerified(server: TestServer, userId: string): Promise<void> {
  await setEmailVerified(server.gatehouse.ctx, systemActor('cli'), userId, true, null)
}

/**
 * The same for a `gatehouse serve` process on a SQLite data directory (the built bundle, crash
 * tests): the row is marked in its file, as the panel's "mark email verified" writes it; the
 * server's change signal sees the write.
 */
export function markVerifiedInDataDir(dataDir: string, email: string): void {
  const db = new Database(join(dataDir, 'gatehouse.db'))
  try {
    db.pragma('busy_timeout = 5000')
    const changed = db.prepare('UPDATE user SET emailVerified = 1 WHERE email = ?').run(email.toLowerCase()).changes
    if (changed !== 1) throw new Error(`no user ${email} in ${dataDir}`)
  } finally {
    db.close()
  }
}

/**
 * Team names that would carry a group-list separator (`,` `;` space) or accents, and one with no
 * letter or digit at all (issue 47 §3): every face names a team by its slug (groups/names.ts
 * teamSlug), so these go out as `x-admin`, `a-admin`, `release-ops`, `equipe-ete` and the last as
 * no group.
 */
export const SEPARATOR_TEAM_NAMES = ['x,admin', 'a;admin', 'Release  Ops', 'Équipe Été', '!!!'] as const

/**
 * The person signed in on `client` creates an organization (named `name`, slug `slug`: they own it
 * and are in its default team, named as the organization) and joins a team of each name given,
 * through the organization API as the panel calls it.
 */
export async function joinTeamsNamed(
  client: HttpClient,
  userId: string,
  organization: { name: string; slug: string },
  names: readonly string[],
): Promise<void> {
  const org = await client.post<{ id: string }>('/organization/create', organization)
  if (org.status !== 200) throw new Error(`organization/create: ${org.status} ${org.text}`)
  for (const name of names) {
    const team = await client.post<{ id: string }>('/organization/create-team', { name, organizationId: org.body.id })
    if (team.status !== 200) throw new Error(`organization/create-team ${name}: ${team.status} ${team.text}`)
    const added = await client.post('/organization/add-team-member', { teamId: team.body.id, userId })
    if (added.status !== 200) throw new Error(`organization/add-team-member: ${added.status} ${added.text}`)
  }
}

/** Whether a group value holds none of the separators a consumer splits a group list on. */
export const noSeparator = (value: string): boolean => !/[,; ]/.test(value)

import { BerWriter } from '@ldapjs/asn1'
import { parseString } from '@ldapjs/filter'
import type { AuthContext, RequestMeta } from '../../core/context.js'
import { simpleBind } from './bind.js'
import { normalizeDn } from './dn.js'
import { findEntries, layoutOf, selectAttributes, uidOf, viewerOf } from './directory.js'
import { ldapError } from './errors.js'
import { readsOf } from './reads.js'
import { type AnswerEntry, decodeRequest, Op, ResultCode, type Scope, WireError } from './wire.js'

/**
 * The control panel's "test a bind and a filter" (issue 36): one simple bind and one search, run
 * through the functions the LDAP listener runs (server.ts), so the answer is what an LDAP client
 * such as `ldapsearch` gets for the same bind and search:
 *
 * - the bind is `simpleBind` itself: the same password check, app passwords, second-factor rule,
 *   ban, lockout counting and audit (`user.sign-in`, `method: ldap`). It runs inside the panel
 *   operation, so the audit names the admin who ran the test as actor (the person tested as
 *   target) and the bind counts in `gatehouse_sign_ins_total{method="ldap"}`. Failed tests count
 *   towards the tested account's lockout like any wrong password: the box is no way round it. The
 *   password is never recorded.
 * - the search is the listener's search request: the filter is encoded to BER and decoded by the
 *   wire decoder (wire.ts), then located, scoped, filtered and trimmed to its attributes and size
 *   limit by the directory's functions, as the bound person sees it now. It is not an LDAP
 *   request, so `gatehouse_ldap_searches_total` does not count it (nor is a search audited).
 */

export interface LdapTestInput {
  bindDN: string
  password: string
  base: string
  scope: Scope
  filter: string
  attributes: string[]
  sizeLimit: number
}

export interface LdapTestResult {
  bind: { code: number; result: string; boundAs: string | null }
  /** Null when the bind failed (an LDAP client stops there too). */
  search: { code: number; result: string; entries: AnswerEntry[] } | null
}

const NAMES = new Map<number, string>(Object.entries(ResultCode).map(([name, code]) => [code, name]))
const resultName = (code: number): string => NAMES.get(code) ?? `code ${code}`

const SCOPES: Record<Scope, number> = { base: 0, one: 1, sub: 2, children: 3 }

/** Parentheses balance (outside `\` escapes): @ldapjs/filter's parser accepts a missing `)`, OpenLDAP's clients do not. */
function balanced(text: string): boolean {
  let depth = 0
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (c === '\\') i++
    else if (c === '(') depth++
    else if (c === ')' && --depth < 0) return false
  }
  return depth === 0
}

/** The search request an LDAP client sends for this search, as the listener decodes it (wire.ts). */
function searchRequest(ctx: AuthContext, input: LdapTestInput) {
  let filter: Buffer
  try {
    if (!balanced(input.filter)) throw new Error('unbalanced parentheses')
    filter = parseString(input.filter).toBer().buffer
  } catch {
    throw ldapError(400, 'INVALID_FILTER', 'filter')
  }
  const w = new BerWriter({ size: 512 })
  w.startSequence(0x30)
  w.writeInt(1)
  w.startSequence(Op.searchRequest)
  w.writeString(input.base)
  w.writeEnumeration(SCOPES[input.scope])
  w.writeEnumeration(0)
  w.writeInt(input.sizeLimit)
  w.writeInt(0)
  w.writeBoolean(false)
  w.appendBuffer(filter)
  w.startSequence(0x30)
  for (const attribute of input.attributes) w.writeString(attribute)
  w.endSequence()
  w.endSequence()
  w.endSequence()
  try {
    const request = decodeRequest(w.buffer, ctx.config().ldap.limits)
    if (request.op !== 'search') throw new WireError('not a search')
    return request
  } catch (error) {
    if (error instanceof WireError) throw ldapError(400, 'INVALID_FILTER', 'filter')
    throw error
  }
}

export async function testBindAndSearch(ctx: AuthContext, input: LdapTestInput, meta: RequestMeta): Promise<LdapTestResult> {
  // The filter is read before anything is tried: a typo costs no bind.
  const request = searchRequest(ctx, input)
  const outcome = await simpleBind(ctx, input.bindDN, Buffer.from(input.password, 'utf8'), meta)
  const boundAs = outcome.user ? normalizeDn(layoutOf(ctx).personDn(uidOf(outcome.user))) : null
  const bind = { code: outcome.code, result: resultName(outcome.code), boundAs }
  if (outcome.code !== ResultCode.success) return { bind, search: null }

  // As the listener's next operation: the bound person re-read, as they are now.
  const user = outcome.user ? await readsOf(ctx).user(outcome.user.id) : null
  const answer = (code: number, entries: AnswerEntry[] = []) => ({ bind, search: { code, result: resultName(code), entries } })
  const result = await findEntries(ctx, viewerOf(ctx, user), request, !!ctx.config().ldap.tls)
  if ('code' in result) return answer(result.code)
  const { found } = result
  const limit = request.sizeLimit
  const sent = limit > 0 ? found.slice(0, limit) : found
  const entries = sent.map((entry) => selectAttributes(entry, request.attributes))
  return answer(limit > 0 && found.length > limit ? ResultCode.sizeLimitExceeded : ResultCode.success, entries)
}

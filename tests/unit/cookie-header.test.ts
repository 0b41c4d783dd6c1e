import { describe, expect, it } from 'vitest'
import { parseCookieHeader } from '../../server/http/cookies.js'

/**
 * The Cookie header parser every authenticated request runs (issue 51 rewrote it to walk the header
 * in place): each `;`-separated part is `name=value`, trimmed; the first of a repeated name wins; a
 * part without `=`, or starting with it, is skipped; the value keeps any further `=`.
 */
describe('parseCookieHeader', () => {
  const parsed = (header: string | null) => [...parseCookieHeader(header)]

  it('reads names and values, trimmed', () => {
    expect(parsed('a=1; b = 2 ;c=3')).toEqual([
      ['a', '1'],
      ['b', '2'],
      ['c', '3'],
    ])
  })

  it('keeps the first of a repeated name', () => {
    expect(parsed('a=1; a=2; b=3; a=4')).toEqual([
      ['a', '1'],
      ['b', '3'],
    ])
  })

  it('skips parts without = or starting with it, and empty parts', () => {
    expect(parsed('flag;=x; ;; k=v;')).toEqual([['k', 'v']])
    // A leading space before = still counts as a name (of nothing once trimmed), as before.
    expect(parsed(' =x; k=v')).toEqual([
      ['', 'x'],
      ['k', 'v'],
    ])
  })

  it('keeps the rest of the part as the value, = included, and empty values', () => {
    expect(parsed('t=abc.def==; e=; last=1')).toEqual([
      ['t', 'abc.def=='],
      ['e', ''],
      ['last', '1'],
    ])
  })

  it('an absent or empty header has no cookies', () => {
    expect(parsed(null)).toEqual([])
    expect(parsed('')).toEqual([])
  })
})

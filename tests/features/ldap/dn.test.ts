import { describe, expect, it } from 'vitest'
import { escapeDnValue, parseDn } from '../../../server/features/ldap/dn.js'

/** RFC 4514 §2.4, one character at a time: the specials, NUL as a hex pair, a leading space or `#`, a trailing space. */
function reference(value: string): string {
  let out = ''
  for (let i = 0; i < value.length; i++) {
    const c = value[i] as string
    if (c === '\0') out += '\\00'
    else if ('\\,+"<>;='.includes(c) || (i === 0 && (c === ' ' || c === '#')) || (i === value.length - 1 && c === ' ')) out += `\\${c}`
    else out += c
  }
  return out
}

describe('a DN value escaped (RFC 4514 §2.4)', () => {
  it('escapes what RFC 4514 names and nothing else (most values take the no-escape path), and parses back to the value; a lone space once', () => {
    // Every character an escape concerns, at the start, the middle and the end, among plain ones.
    const alphabet = ['a', 'Z', '0', '.', '-', '_', '@', 'é', ' ', '#', '\\', ',', '+', '"', '<', '>', ';', '=', '\0']
    let seed = 48
    const next = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31
      return seed
    }
    const values = ['', 'alice', 'p100', 'a.b@example.com', ' ', '#', ' lead', 'trail ', '#hash', 'a#b', 'a b']
    for (let i = 0; i < 5000; i++) {
      let value = ''
      for (let n = next() % 7; n >= 0; n--) value += alphabet[next() % alphabet.length]
      values.push(value)
    }
    for (const value of values) {
      expect(escapeDnValue(value), JSON.stringify(value)).toBe(reference(value))
      if (value.length > 0 && !value.includes('\0'))
        expect(parseDn(`uid=${escapeDnValue(value)}`)[0]?.value, JSON.stringify(value)).toBe(value)
    }
  })
})

import { BerWriter } from '@ldapjs/asn1'
import { describe, expect, it } from 'vitest'
import { encodeEntry, encodeEntryOp, frameMessage } from '../../../server/features/ldap/wire.js'

/** The message as one BerWriter writes it (the encoding before a person's protocolOp was kept and framed per message). */
function reference(id: number, entry: { dn: string; attributes: { name: string; values: string[] }[] }, typesOnly: boolean): Buffer {
  const w = new BerWriter({ size: 256 })
  w.startSequence(0x30)
  w.writeInt(id)
  w.startSequence(0x64)
  w.writeString(entry.dn)
  w.startSequence(0x30)
  for (const attribute of entry.attributes) {
    w.startSequence(0x30)
    w.writeString(attribute.name)
    w.startSequence(0x31)
    if (!typesOnly) for (const value of attribute.values) w.writeString(value)
    w.endSequence()
    w.endSequence()
  }
  w.endSequence()
  w.endSequence()
  w.endSequence()
  return w.buffer
}

describe('a kept protocolOp framed per message (issue 48)', () => {
  it('writes the same bytes as one BerWriter, for every length form and message id size', () => {
    const ids = [0, 1, 127, 128, 255, 256, 32767, 32768, 8388607, 8388608, 2147483647]
    // Entries whose messages need a short length, 0x81, 0x82 and 0x83.
    const sizes = [0, 1, 60, 110, 118, 122, 200, 240, 260, 5000, 65500, 70000]
    for (const size of sizes) {
      const entry = {
        dn: 'uid=p1,ou=people,dc=example,dc=com',
        attributes: [
          { name: 'cn', values: ['x'.repeat(size)] },
          { name: 'memberOf', values: ['cn=é,ou=groups,dc=example,dc=com', 'y'.repeat(size >> 1)] },
          { name: 'empty', values: [] },
        ],
      }
      for (const typesOnly of [false, true])
        for (const id of ids) {
          expect(frameMessage(id, encodeEntryOp(entry, typesOnly)).equals(reference(id, entry, typesOnly)), `${id} ${size}`).toBe(true)
          expect(encodeEntry(id, entry, typesOnly).equals(reference(id, entry, typesOnly))).toBe(true)
        }
    }
  })
})

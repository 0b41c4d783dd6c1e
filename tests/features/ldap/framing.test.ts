import { BerWriter } from '@ldapjs/asn1'
import { describe, expect, it } from 'vitest'
import { configSchema } from '../../../server/config-schema.js'
import { DirectoryIndex, type IndexedGroup, type IndexedPerson } from '../../../server/features/ldap/directory-index.js'
import { layoutOfBase } from '../../../server/features/ldap/dn.js'
import { type Entry, PersonEntry, selectAttributes, writeSelected } from '../../../server/features/ldap/directory.js'
import { type AnswerAttribute, encodeAttribute, EntryWriter } from '../../../server/features/ldap/wire.js'

/** The message as one BerWriter writes it (the encoding before entries were sized and written in place). */
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

/** The message an EntryWriter writes for one entry (the listener's path). */
function encodeEntry(id: number, entry: { dn: string; attributes: readonly AnswerAttribute[] }, typesOnly: boolean): Buffer {
  const writer = new EntryWriter(id)
  writer.entry(entry.dn, entry.attributes, typesOnly)
  return writer.take()
}

describe('searchResultEntry messages sized and written in place (issue 48)', () => {
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
          expect(encodeEntry(id, entry, typesOnly).equals(reference(id, entry, typesOnly)), `${id} ${size}`).toBe(true)
          // Attributes encoded apart and copied in: the same bytes.
          const parts = entry.attributes.map((a, i) => (i % 2 === 0 ? encodeAttribute(a.name, a.values, typesOnly) : a))
          expect(encodeEntry(id, { dn: entry.dn, attributes: parts }, typesOnly).equals(reference(id, entry, typesOnly))).toBe(true)
        }
    }
  })

  it('writes ASCII and other text alike: short and long, the first byte past ASCII anywhere, surrogate pairs', () => {
    const values = [
      '',
      'a',
      'a'.repeat(63),
      `${'a'.repeat(63)}é`,
      'a'.repeat(64),
      'a'.repeat(65),
      `é${'a'.repeat(70)}`,
      '😀x',
      `x${'\u007f'}`,
      '\u0080',
    ]
    for (const typesOnly of [false, true]) {
      const entry = {
        dn: `uid=${'d'.repeat(64)}é,ou=people,dc=example,dc=com`,
        attributes: [
          { name: 'description', values },
          { name: 'cné', values },
        ],
      }
      expect(encodeEntry(3, entry, typesOnly).equals(reference(3, entry, typesOnly))).toBe(true)
    }
  })

  it('writes a slice of entries and the result into one buffer: the bytes of each message one after the other', () => {
    // Sizes around the length forms, and past the writer's first buffer (it grows, keeping what it wrote).
    const entries = [0, 1, 118, 122, 300, 5000, 70000, 2].map((size) => ({
      dn: `uid=p${size},ou=people,dc=example,dc=com`,
      attributes: [
        { name: 'cn', values: ['é'.repeat(size)] },
        { name: 'mail', values: [`p${size}@example.com`] },
      ],
    }))
    const done = Buffer.from([0x30, 0x0c, 0x02, 0x01, 0x07, 0x65, 0x07, 0x0a, 0x01, 0x00, 0x04, 0x00, 0x04, 0x00])
    for (const id of [0, 127, 128, 32768, 2147483647]) {
      const each = entries.map((entry) => reference(id, entry, false))
      const writer = new EntryWriter(id)
      // Two slices from one writer, the second ending with the result; then the result alone.
      for (const entry of entries.slice(0, 3)) writer.entry(entry.dn, entry.attributes, false)
      expect(writer.take().equals(Buffer.concat(each.slice(0, 3)))).toBe(true)
      for (const entry of entries.slice(3)) {
        // One attribute already encoded, copied in.
        writer.entry(entry.dn, [encodeAttribute('cn', entry.attributes[0]?.values ?? [], false), ...entry.attributes.slice(1)], false)
      }
      expect(writer.take(done).equals(Buffer.concat([...each.slice(3), done]))).toBe(true)
      expect(writer.take(done).equals(done)).toBe(true)
      expect(writer.take().length).toBe(0)
    }
  })
})

describe("a person's entry encoded straight from the index (issue 48)", () => {
  const group = (name: string): IndexedGroup => ({
    name,
    lower: name.toLowerCase(),
    dn: `cn=${name},ou=groups,dc=example,dc=com`,
    ndn: `cn=${name.toLowerCase()},ou=groups,dc=example,dc=com`,
    members: [],
  })
  const person = (id: string, name: string, groups: IndexedGroup[]): IndexedPerson => ({
    id,
    name,
    email: `${id}@example.com`,
    emailVerified: true,
    banned: null,
    banExpires: null,
    createdAt: Date.UTC(2026, 0, 1, 12, 30, 5, 250),
    updatedAt: Date.UTC(2026, 5, 2),
    at: 0,
    uid: id.toLowerCase(),
    dn: `uid=${id.toLowerCase()},ou=people,dc=example,dc=com`,
    ndn: `uid=${id.toLowerCase()},ou=people,dc=example,dc=com`,
    groups,
    uuid: undefined,
  })
  const shared = [group('admin'), group('Org/Team-é')]
  const people = [
    person('Ada', '  Ada  King Lovelace ', shared),
    person('bob', 'Bob', shared),
    person('nobody', '', []),
    person('long', 'L'.repeat(300), [group('x'.repeat(200))]),
  ]
  const selections = [
    [],
    ['*'],
    ['+'],
    ['*', '+'],
    ['uid', 'cn', 'mail', 'memberOf'],
    ['1.1'],
    ['SN', 'gn', 'displayName', 'entryUUID', 'createTimestamp', 'modifyTimestamp'],
    ['objectClass', 'commonName', 'rfc822Mailbox', 'userid'],
    ['memberof', 'nothing'],
  ]

  /** The message `writeSelected` writes for one entry. */
  const written = (id: number, entry: Entry, requested: string[], typesOnly: boolean): Buffer => {
    const writer = new EntryWriter(id)
    writeSelected(writer, entry, requested, typesOnly)
    return writer.take()
  }

  it('writes the bytes of its attributes as built and selected, for every selection', () => {
    for (const p of people)
      for (const requested of selections)
        for (const typesOnly of [false, true]) {
          // Twice: the second copies objectClass and memberOf from their shared encodings.
          for (let round = 0; round < 2; round++) {
            const entry = new PersonEntry(p)
            const selected = selectAttributes(entry, requested)
            const got = written(7, entry, requested, typesOnly)
            expect(got.equals(encodeEntry(7, selected, typesOnly)), `${p.id} ${requested.join(',')} ${typesOnly}`).toBe(true)
            expect(got.equals(reference(7, selected, typesOnly))).toBe(true)
          }
        }
  })

  it('reads one attribute (what a filter or a compare asks) as the whole entry holds it', () => {
    const names = ['objectclass', 'uid', 'cn', 'displayname', 'sn', 'givenname', 'mail', 'memberof']
    const operational = ['entryuuid', 'createtimestamp', 'modifytimestamp']
    const values = (a: { name: string; values: string[]; dn?: boolean } | undefined) =>
      a && { name: a.name, values: [...a.values], dn: a.dn }
    for (const p of people) {
      const whole = new PersonEntry(p).attributes
      expect(whole.map((a) => a.name.toLowerCase())).toEqual(
        [...names, ...operational].filter((n) => whole.some((a) => a.name.toLowerCase() === n)),
      )
      for (const name of [...names, ...operational, 'member', 'nothing']) {
        const inWhole = whole.find((a) => a.name.toLowerCase() === name)
        // Alone (nothing built), and once the entry was built.
        const alone = new PersonEntry(p)
        expect(values(alone.attribute?.(name)), `${p.id} ${name}`).toEqual(values(inWhole))
        const built = new PersonEntry(p)
        void built.attributes
        expect(values(built.attribute?.(name)), `${p.id} ${name} built`).toEqual(values(inWhole))
      }
    }
    // givenName only for a name of two words or more; memberOf only with groups.
    expect(new PersonEntry(people[1] as IndexedPerson).attribute?.('givenname')).toBeUndefined()
    expect(new PersonEntry(people[2] as IndexedPerson).attribute?.('memberof')).toBeUndefined()
    expect(new PersonEntry(people[0] as IndexedPerson).attribute?.('givenname')?.values).toEqual(['Ada'])
  })

  it("finds a viewer's own person through the uid, and by id when another holds that uid", () => {
    const index = new DirectoryIndex(configSchema.parse({}), layoutOfBase('dc=example,dc=com'))
    const first = { ...person('Same', 'First', []), id: 'id-1' }
    const second = { ...person('Same', 'Second', []), id: 'id-2', at: 1 }
    const other = { ...person('other', 'Other', []), id: 'id-3', at: 2 }
    index.people.push(first, second, other)
    // The first one of a uid keeps it, as the load does.
    index.byUid.set('same', first)
    index.byUid.set('other', other)
    expect(index.entryOf({ id: 'id-1', username: 'Same', email: 'same@example.com' })).toBe(first)
    expect(index.entryOf({ id: 'id-2', username: 'same', email: 'same2@example.com' })).toBe(second)
    expect(index.entryOf({ id: 'id-3', username: null, email: 'x@example.com' })).toBe(other)
    expect(index.entryOf({ id: 'id-4', username: 'other', email: 'o@example.com' })).toBeUndefined()
  })
})

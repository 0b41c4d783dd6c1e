import { integer, sqliteTable, text } from 'drizzle-orm/sqlite-core'

const timestamp = (name: string) => integer(name, { mode: 'timestamp_ms' })

/**
 * Signing keys (the spec's `keypair`; better-auth's jwt plugin calls its table `jwks` and adds
 * `alg`, `crv` and `expiresAt`, kept here too). `publicKey` is the public JWK as JSON;
 * `privateKey` the private JWK sealed with the auth secret (server/crypto/encrypt.ts).
 * `expiresAt` set means retired: no longer signing, published in the JWKS until the grace
 * period after it has passed, then deleted.
 */
export const keypair = sqliteTable('keypair', {
  id: text('id').primaryKey(),
  publicKey: text('publicKey').notNull(),
  privateKey: text('privateKey').notNull(),
  createdAt: timestamp('createdAt').notNull(),
  alg: text('alg'),
  crv: text('crv'),
  expiresAt: timestamp('expiresAt'),
})

export type KeypairRow = typeof keypair.$inferSelect

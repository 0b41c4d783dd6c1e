import { z } from 'zod'
import { mutation, ok, query } from '../../panel-frame/op.js'

export const appPasswordViewSchema = z.object({
  id: z.string(),
  name: z.string(),
  /** The secret's last four characters. */
  hint: z.string(),
  createdAt: z.number(),
  expiresAt: z.number().nullable(),
  lastUsedAt: z.number().nullable(),
  expired: z.boolean(),
})

/** Panel operations of app passwords (zod only: shared with the renderer). */
export const appPasswordsContract = {
  'appPasswords.list': query(
    "A user's app passwords (name, last four characters, last use, expiry; never the secret)",
    z.object({ userId: z.string().min(1) }).strict(),
    z.object({ appPasswords: z.array(appPasswordViewSchema) }),
  ),
  'appPasswords.revoke': mutation(
    "Revoke one of a user's app passwords: it stops working at the next bind",
    z.object({ userId: z.string().min(1), id: z.string().min(1) }).strict(),
    ok,
  ),
}

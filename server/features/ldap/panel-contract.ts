import { z } from 'zod'
import { mutation } from '../../panel-frame/op.js'

/** The LDAP view's operation (zod only: shared with the renderer). Its settings go through the Settings operations. */

const text = (max: number) => z.string().max(max)

export const ldapTestInputSchema = z
  .object({
    /** A people DN (`uid=…,ou=people,<baseDN>`); empty with an empty password: an anonymous bind. */
    bindDN: text(1024),
    password: text(1024),
    base: text(1024),
    scope: z.enum(['base', 'one', 'sub']),
    filter: z.string().trim().min(1).max(4096),
    /** Attributes to return (`*`, `+`, `1.1` or names); none: the user attributes. */
    attributes: z.array(z.string().trim().min(1).max(200)).max(100).default([]),
    /** The search's size limit, as `ldapsearch -z`: the panel shows at most 1000 entries. */
    sizeLimit: z.number().int().min(1).max(1000).default(100),
  })
  .strict()

const resultSchema = z.object({ code: z.number(), result: z.string() })
export const ldapEntrySchema = z.object({
  dn: z.string(),
  attributes: z.array(z.object({ name: z.string(), values: z.array(z.string()) })),
})

export const ldapContract = {
  'ldap.test': mutation(
    'Binds to the LDAP directory with a DN and password and runs one search as that person, through the LDAP listener’s own functions: the answer an LDAP client gets (the bind counts towards lockout and is audited as a sign-in with method ldap, by the admin)',
    ldapTestInputSchema,
    z.object({
      bind: resultSchema.extend({ boundAs: z.string().nullable() }),
      search: resultSchema.extend({ entries: z.array(ldapEntrySchema) }).nullable(),
    }),
  ),
}

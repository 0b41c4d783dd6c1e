import { z } from 'zod'

/**
 * The NameID formats Gatehouse issues: `email` (default), `persistent` (pairwise: a value of its own
 * per SP, name-id.ts), `persistent-shared` (the user id, the same at every SP: what `persistent` was
 * before pairwise identifiers), `unspecified` (the email). The persistent URN alone means `persistent`.
 */
export const NAME_ID_FORMATS = {
  email: 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress',
  persistent: 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent',
  'persistent-shared': 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent',
  unspecified: 'urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified',
} as const
export type NameIdFormat = keyof typeof NAME_ID_FORMATS

/** The short name of a format given by its short name or its full URN; null when it is neither. */
export function nameIdFormatOf(value: string): NameIdFormat | null {
  const v = value.trim()
  if (v in NAME_ID_FORMATS) return v as NameIdFormat
  for (const [short, urn] of Object.entries(NAME_ID_FORMATS)) if (urn === v) return short as NameIdFormat
  return null
}

export const nameIdFormat = z.string().transform((value, ctx) => {
  const short = nameIdFormatOf(value)
  if (!short) {
    ctx.addIssue({ code: 'custom', message: `must be one of ${Object.keys(NAME_ID_FORMATS).join(', ')} or its full URN` })
    return z.NEVER
  }
  return short
})

/** A service provider declared in the config file: its metadata inline (`metadataXML`) or in a file (`metadataFile`). */
export const samlServiceProvider = z
  .strictObject({
    name: z.string().trim().min(1),
    metadataXML: z.string().min(1).optional(),
    metadataFile: z.string().min(1).optional(),
    nameIDFormat: nameIdFormat.default('email'),
    allowedGroups: z.array(z.string().trim().min(1)).default([]),
  })
  .refine((sp) => (sp.metadataXML === undefined) !== (sp.metadataFile === undefined), {
    message: 'give exactly one of metadataXML or metadataFile',
  })
export type SamlServiceProviderConfig = z.output<typeof samlServiceProvider>

/**
 * `saml.*`: Gatehouse as a SAML 2.0 identity provider (entityID `{baseURL}/saml/metadata`). Service
 * providers come from the database (`gatehouse saml sp create`, the panel) and from
 * `serviceProviders` here (read-only elsewhere).
 */
export const samlConfig = z
  .object({
    enabled: z.boolean().default(false),
    serviceProviders: z.array(samlServiceProvider).default([]),
    /**
     * Days a key published by `gatehouse saml cert rotate` waits before it signs (unless `--activate`
     * switches to it sooner): service providers that re-read the metadata take it in meanwhile. 0: at once.
     */
    keyRolloverDays: z.number().int().min(0).max(365).default(7),
  })
  .prefault({})

export type SamlConfig = z.output<typeof samlConfig>

/** The config sections this feature owns, by path (its defineFeature declares them; bin/gen-features.js mounts them). */
export const configSections = { saml: samlConfig }

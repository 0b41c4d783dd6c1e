import { z } from 'zod'
import { mutation, none, ok, query, readBase } from '../../panel-frame/op.js'

/** The control panel's SAML operations (zod only: shared with the renderer). Times are epoch ms. */

const format = z.enum(['email', 'persistent', 'persistent-shared', 'unspecified'])
const groups = z.array(z.string().trim().min(1).max(200)).max(100)
const metadataXml = z
  .string()
  .min(1)
  .max(1024 * 1024)

export const samlServiceProviderSchema = z.object({
  id: z.string(),
  source: z.enum(['config', 'database']),
  name: z.string(),
  entityId: z.string(),
  nameIdFormat: format,
  allowedGroups: z.array(z.string()),
  acsUrls: z.array(z.string()),
  sloUrls: z.array(z.string()),
  authnRequestsSigned: z.boolean(),
  signingCertificates: z.number(),
  metadataXml: z.string(),
  createdAt: z.number().nullable(),
  updatedAt: z.number().nullable(),
})
export type SamlServiceProviderView = z.output<typeof samlServiceProviderSchema>

export const samlContract = {
  'saml.serviceProviders': query(
    'Applications that sign their users in through Gatehouse over SAML 2.0 (service providers), with the IdP metadata URL',
    none,
    z.object({ serviceProviders: z.array(samlServiceProviderSchema), metadataUrl: z.string(), entityId: z.string(), enabled: z.boolean() }),
  ),
  'saml.fetchMetadata': mutation(
    'Downloads a service provider’s metadata from its URL (nothing is saved)',
    z.object({ url: z.string().url().max(2048) }).strict(),
    z.object({ metadataXml: z.string() }),
  ),
  'saml.createServiceProvider': mutation(
    'Registers a SAML service provider from its metadata',
    z
      .object({
        metadataXml,
        name: z.string().min(1).max(200).optional(),
        nameIdFormat: format.optional(),
        allowedGroups: groups.optional(),
      })
      .strict(),
    samlServiceProviderSchema,
  ),
  'saml.updateServiceProvider': mutation(
    'Changes a service provider’s name, metadata, NameID format or allowed groups: only the fields given; with `base` (each of them as read), refused (409 CONFLICT) when another admin changed one since',
    z
      .object({
        id: z.string().min(1),
        metadataXml: metadataXml.optional(),
        name: z.string().min(1).max(200).optional(),
        nameIdFormat: format.optional(),
        allowedGroups: groups.optional(),
        base: readBase,
      })
      .strict(),
    samlServiceProviderSchema,
  ),
  'saml.deleteServiceProvider': mutation('Deletes a service provider', z.object({ id: z.string().min(1) }).strict(), ok),
}

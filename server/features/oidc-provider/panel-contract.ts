import { z } from 'zod'
import { mutation, none, ok, query, readBase } from '../../panel-frame/op.js'

/** The control panel's OIDC client operations (zod only: shared with the renderer). Times are epoch ms. */

const uri = z.string().min(1).max(2048)
const idTokenAlg = z.enum(['RS256', 'ES256', 'EdDSA'])
const ids = z.array(z.string().min(1).max(200)).max(100)
const grantType = z.enum(['authorization_code', 'refresh_token', 'client_credentials'])

export const oidcClientViewSchema = z.object({
  clientId: z.string(),
  name: z.string(),
  logo: z.string().nullable(),
  redirectUris: z.array(z.string()),
  postLogoutRedirectUris: z.array(z.string()),
  public: z.boolean(),
  pkceRequired: z.boolean(),
  skipConsent: z.boolean(),
  allowedOrganizations: z.array(z.string()),
  allowedTeams: z.array(z.string()),
  resourceServer: z.boolean(),
  idTokenSignedResponseAlg: idTokenAlg,
  backchannelLogoutUri: z.string().nullable(),
  requirePar: z.boolean(),
  /** The `sub` its tokens carry: the user id (public) or one of its own (pairwise). */
  subjectType: z.enum(['public', 'pairwise']),
  /** The grants it may use at the token endpoint. */
  grantTypes: z.array(z.string()),
  /** Back-channel logout deliveries fail since then (null: not failing), with the last error. */
  backchannelFailingSince: z.number().nullable(),
  backchannelLastError: z.string().nullable(),
  /** A self-registered client (RFC 7591): the initial access token it registered with. */
  registeredByToken: z.string().nullable(),
  createdAt: z.number(),
  updatedAt: z.number(),
  secretRotatedAt: z.number().nullable(),
})
export type OidcClientView = z.output<typeof oidcClientViewSchema>

const clientFields = {
  name: z.string().min(1).max(200),
  redirectUris: z.array(uri).min(1).max(50),
  postLogoutRedirectUris: z.array(uri).max(50).optional(),
  logo: z.string().max(2048).nullable().optional(),
  pkceRequired: z.boolean().optional(),
  skipConsent: z.boolean().optional(),
  allowedOrganizations: ids.optional(),
  allowedTeams: ids.optional(),
  resourceServer: z.boolean().optional(),
  idTokenSignedResponseAlg: idTokenAlg.optional(),
  backchannelLogoutUri: uri.nullable().optional(),
  requirePar: z.boolean().optional(),
  subjectType: z.enum(['public', 'pairwise']).optional(),
  /** authorization_code always; client_credentials only for a confidential client. */
  grantTypes: z.array(grantType).min(1).max(3).optional(),
}

export const registrationTokenViewSchema = z.object({
  id: z.string(),
  createdAt: z.number(),
  expiresAt: z.number().nullable(),
  usesLeft: z.number().nullable(),
  used: z.number(),
  revokedAt: z.number().nullable(),
  label: z.string().nullable(),
  createdBy: z.string().nullable(),
  active: z.boolean(),
})
export type RegistrationTokenView = z.output<typeof registrationTokenViewSchema>

export const connectedAppSchema = z.object({
  clientId: z.string(),
  name: z.string(),
  logo: z.string().nullable(),
  scopes: z.array(z.string()),
  claims: z.array(z.string()),
  grantedAt: z.number(),
  updatedAt: z.number(),
})
export type ConnectedAppView = z.output<typeof connectedAppSchema>

export const oidcContract = {
  'oidc.clients': query(
    'Applications that sign their users in through Gatehouse (OpenID Connect clients), with the issuer URL',
    none,
    z.object({ clients: z.array(oidcClientViewSchema), issuer: z.string(), enabled: z.boolean() }),
  ),
  'oidc.createClient': mutation(
    'Registers an OpenID Connect client; the secret is in this answer only',
    z.object({ ...clientFields, public: z.boolean().optional() }).strict(),
    z.object({ client: oidcClientViewSchema, clientSecret: z.string().nullable() }),
  ),
  'oidc.updateClient': mutation(
    'Changes a client’s name, logo, redirect and post-logout redirect URIs, back-channel logout URI, PAR requirement, grant types, subject type, PKCE, consent, group restriction, resource-server switch and ID token algorithm (its id, kind and secret stay): only the fields given; with `base` (each of them as read), refused (409 CONFLICT) when another admin changed one since',
    z
      .object({
        clientId: z.string().min(1),
        ...clientFields,
        name: clientFields.name.optional(),
        redirectUris: clientFields.redirectUris.optional(),
        base: readBase,
      })
      .strict(),
    oidcClientViewSchema,
  ),
  'oidc.rotateSecret': mutation(
    'A new secret for a confidential client (shown once); the old one stops working at once',
    z.object({ clientId: z.string().min(1) }).strict(),
    z.object({ client: oidcClientViewSchema, clientSecret: z.string() }),
  ),
  'oidc.deleteClient': mutation('Deletes a client (its tokens stop working)', z.object({ clientId: z.string().min(1) }).strict(), ok),
  'oidc.userApps': query(
    'The applications a user has allowed (remembered consent) and what each may see',
    z.object({ userId: z.string().min(1) }).strict(),
    z.object({ apps: z.array(connectedAppSchema) }),
  ),
  'oidc.revokeUserApp': mutation(
    'Revokes a user’s consent to an application: its tokens stop working at once and the next sign-in asks again',
    z.object({ userId: z.string().min(1), clientId: z.string().min(1) }).strict(),
    ok,
  ),
  'oidc.registrationTokens': query(
    'Initial access tokens for dynamic client registration (never the tokens themselves)',
    none,
    z.object({ tokens: z.array(registrationTokenViewSchema), enabled: z.boolean() }),
  ),
  'oidc.createRegistrationToken': mutation(
    'Creates an initial access token for dynamic client registration; the token is in this answer only',
    z
      .object({
        expiresIn: z.number().int().min(1).max(31_536_000).nullable().optional(),
        uses: z.number().int().min(1).max(1_000_000).nullable().optional(),
        label: z.string().max(200).nullable().optional(),
      })
      .strict(),
    z.object({ token: z.string(), registrationToken: registrationTokenViewSchema }),
  ),
  'oidc.revokeRegistrationToken': mutation(
    'Revokes an initial access token (clients it registered stay)',
    z.object({ id: z.string().min(1) }).strict(),
    ok,
  ),
  'oidc.settings': query('The effective `oidcProvider.*` configuration', none, z.record(z.string(), z.unknown())),
  'oidc.configure': mutation(
    'Applies a JSON Merge Patch to the `oidcProvider.*` configuration, live (validated by the config schema)',
    z.object({ patch: z.record(z.string(), z.unknown()), base: z.record(z.string(), z.unknown()).optional() }).strict(),
    z.record(z.string(), z.unknown()),
  ),
}

import { z } from 'zod'
import { secret } from '../../config/secret.js'

const httpURL = z.url({ protocol: /^https?$/ })
const params = z.record(z.string(), z.string())

/**
 * One provider of `genericOAuth.config`, under better-auth 1.7's option names (its generic-oauth
 * plugin's GenericOAuthConfig). Options that are functions in better-auth (getToken, getUserInfo,
 * mapProfileToUser, accountSubject, a refreshTokenParams function) have no JSON form and are not
 * accepted; neither are tokenEndpointAuth (private_key_jwt), requireEmailVerification,
 * allowIdpInitiated and the provider-logout options, which Gatehouse does not implement.
 */
export const genericOAuthProviderSchema = z
  .strictObject({
    /** The id in /sign-in/social {provider} and /callback/<providerId>. */
    providerId: z
      .string()
      .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, 'letters, digits, ".", "_" and "-", at most 64, starting with a letter or digit'),
    /** The name on the sign-in page's button (default: the providerId). */
    name: z.string().min(1).max(100).optional(),
    /** The OpenID discovery document (…/.well-known/openid-configuration). */
    discoveryUrl: httpURL.optional(),
    /** Refuse the provider unless discovery gives an issuer and a jwks_uri to verify ID tokens with. */
    requireIdTokenVerification: z.boolean().default(false),
    authorizationUrl: httpURL.optional(),
    tokenUrl: httpURL.optional(),
    userInfoUrl: httpURL.optional(),
    clientId: z.string().min(1),
    /** In clear or sealed (`enc:v1:…`, purpose "client-secret", as the social providers' secrets). */
    clientSecret: secret(z.string()).optional(),
    scopes: z.array(z.string().min(1)).default([]),
    redirectURI: httpURL.optional(),
    responseType: z.string().min(1).optional(),
    responseMode: z.enum(['query', 'form_post']).optional(),
    prompt: z.enum(['none', 'login', 'create', 'consent', 'select_account', 'select_account consent', 'login consent']).optional(),
    pkce: z.boolean().default(true),
    accessType: z.string().min(1).optional(),
    /** Seconds an access token lives when the token response has no expires_in. */
    accessTokenExpiresIn: z.number().int().positive().optional(),
    authorizationUrlParams: params.default({}),
    tokenUrlParams: params.default({}),
    refreshTokenParams: params.default({}),
    disableImplicitSignUp: z.boolean().default(false),
    disableSignUp: z.boolean().default(false),
    /** Client authentication at the token endpoint: client_secret_post or client_secret_basic. */
    authentication: z.enum(['basic', 'post']).default('post'),
    discoveryHeaders: z.record(z.string(), z.string()).optional(),
    authorizationHeaders: z.record(z.string(), z.string()).default({}),
    overrideUserInfo: z.boolean().default(false),
    /** Send no nonce and accept ID tokens without one (providers that do not echo it). */
    disableIdTokenNonceBinding: z.boolean().default(false),
  })
  .superRefine((c, issue) => {
    if (!c.discoveryUrl && !(c.authorizationUrl && c.tokenUrl))
      issue.addIssue({ code: 'custom', message: 'needs discoveryUrl, or authorizationUrl and tokenUrl', path: ['discoveryUrl'] })
    if (c.authentication === 'basic' && !c.clientSecret)
      issue.addIssue({ code: 'custom', message: 'authentication "basic" requires clientSecret', path: ['clientSecret'] })
  })

export type GenericOAuthProviderConfig = z.output<typeof genericOAuthProviderSchema>

/** `genericOAuth.config`: any OAuth 2.0 / OpenID Connect provider (better-auth's genericOAuth plugin). */
export const genericOAuthConfig = z
  .object({
    config: z
      .array(genericOAuthProviderSchema)
      .default([])
      .refine((list) => new Set(list.map((p) => p.providerId)).size === list.length, 'providerId must be unique'),
  })
  .prefault({})

/** The config sections this feature owns, by path (its defineFeature declares them; bin/gen-features.js mounts them). */
export const configSections = { genericOAuth: genericOAuthConfig }

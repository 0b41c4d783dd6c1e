import { z } from 'zod'
import { secret } from '../../config/secret.js'
import { BUILT_IN_PROVIDER_IDS } from '../../core/social-provider-ids.js'

/**
 * The runtime options of the social providers, under better-auth's names:
 * `socialProviders.<id>` (SPEC §1 lists the 18). This module is imported by the config schema, so
 * it stays free of the engine's code.
 */
export const PROVIDER_IDS = BUILT_IN_PROVIDER_IDS

export type ProviderId = (typeof PROVIDER_IDS)[number]

/** The purpose bound into a sealed client secret (server/crypto/encrypt.ts); the control panel seals, the flow opens. */
export const CLIENT_SECRET_PURPOSE = 'client-secret'

export const isProviderId = (value: string): value is ProviderId => (PROVIDER_IDS as readonly string[]).includes(value)

/** Every URL a provider calls, by name; each can be overridden under `socialProviders.<id>.endpoints`. */
export const PROVIDER_ENDPOINTS = {
  apple: ['authorization', 'token', 'jwks'],
  discord: ['authorization', 'token', 'userInfo'],
  facebook: ['authorization', 'token', 'userInfo', 'jwks'],
  github: ['authorization', 'token', 'userInfo', 'emails'],
  microsoft: ['authorization', 'token', 'photo'],
  google: ['authorization', 'token', 'jwks'],
  spotify: ['authorization', 'token', 'userInfo'],
  twitch: ['authorization', 'token'],
  twitter: ['authorization', 'token', 'userInfo'],
  dropbox: ['authorization', 'token', 'userInfo'],
  kick: ['authorization', 'token', 'userInfo'],
  linkedin: ['authorization', 'token', 'userInfo'],
  gitlab: ['authorization', 'token', 'userInfo'],
  tiktok: ['authorization', 'token', 'userInfo'],
  reddit: ['authorization', 'token', 'userInfo'],
  roblox: ['authorization', 'token', 'userInfo'],
  vk: ['authorization', 'token', 'userInfo'],
  zoom: ['authorization', 'token', 'userInfo'],
} as const satisfies Record<ProviderId, readonly string[]>

export type EndpointName<P extends ProviderId> = (typeof PROVIDER_ENDPOINTS)[P][number]

const httpURL = z.url({ protocol: /^https?$/ })

const commonOptions = {
  /** false keeps the configuration but refuses the provider (404 PROVIDER_NOT_FOUND). */
  enabled: z.boolean().default(true),
  clientId: z.string().optional(),
  /** In clear or sealed (`enc:v1:…`, see server/crypto/encrypt.ts, purpose "client-secret"). */
  clientSecret: secret(z.string()).optional(),
  /** Extra scopes added to the provider's defaults. */
  scope: z.array(z.string().min(1)).default([]),
  disableDefaultScope: z.boolean().default(false),
  prompt: z.string().optional(),
  redirectURI: httpURL.optional(),
  disableSignUp: z.boolean().default(false),
  disableImplicitSignUp: z.boolean().default(false),
  disableIdTokenSignIn: z.boolean().default(false),
  overrideUserInfoOnSignIn: z.boolean().default(false),
  // Provider-specific options (ignored by the others).
  /** tiktok: the app's client key (defaults to clientId). */
  clientKey: z.string().optional(),
  /** google */
  accessType: z.enum(['offline', 'online']).optional(),
  display: z.string().optional(),
  hd: z.string().optional(),
  /** microsoft */
  tenantId: z
    .string()
    .regex(/^[A-Za-z0-9.-]+$/)
    .default('common'),
  profilePhotoSize: z
    .union([
      z.literal(48),
      z.literal(64),
      z.literal(96),
      z.literal(120),
      z.literal(240),
      z.literal(360),
      z.literal(432),
      z.literal(504),
      z.literal(648),
    ])
    .default(48),
  disableProfilePhoto: z.boolean().default(false),
  /** facebook */
  fields: z.array(z.string().min(1)).default([]),
  configId: z.string().optional(),
  /** gitlab: a self-managed instance, e.g. https://gitlab.example.com */
  issuer: httpURL.optional(),
  /** reddit */
  duration: z.enum(['temporary', 'permanent']).optional(),
  /** apple: the audience of ID tokens minted for a native app */
  appBundleIdentifier: z.string().optional(),
  /** zoom, and any provider: false omits PKCE */
  pkce: z.boolean().optional(),
}

function providerOptions<P extends ProviderId>(id: P) {
  const names = PROVIDER_ENDPOINTS[id] as readonly string[]
  const endpoints = z.strictObject(
    Object.fromEntries(names.map((n) => [n, httpURL.optional()])) as Record<EndpointName<P>, z.ZodOptional<typeof httpURL>>,
  )
  return z.object({ ...commonOptions, endpoints: endpoints.optional() })
}

export const socialProvidersSchema = z
  .strictObject(
    Object.fromEntries(PROVIDER_IDS.map((id) => [id, providerOptions(id).optional()])) as unknown as {
      [P in ProviderId]: z.ZodOptional<ReturnType<typeof providerOptions<P>>>
    },
  )
  .default({})

export type SocialProvidersConfig = z.output<typeof socialProvidersSchema>
const anyProviderOptions = z.object({ ...commonOptions, endpoints: z.record(z.string(), httpURL.optional()).optional() })
/** One provider's options, whichever provider (endpoint names are checked by the schema above). */
export type ProviderOptions = z.output<typeof anyProviderOptions>

/** The options of a provider a feature adds (generic OAuth): the defaults, with what it sets. */
export const providerOptionsOf = (input: Partial<z.input<typeof anyProviderOptions>>): ProviderOptions => anyProviderOptions.parse(input)

import { z } from 'zod'

/**
 * `oidcProvider.*`: Gatehouse as an OpenID Connect provider for other applications (Grafana,
 * Gitea, Nextcloud, …). Off by default; switchable live. Lifetimes are seconds.
 */
export const oidcProviderConfig = z
  .object({
    enabled: z.boolean().default(false),
    /**
     * `POST /oauth2/token` answers plain rotating refreshes and client-credentials grants itself
     * (token-fast.ts) and hands everything else to oidc-provider; false: oidc-provider serves all.
     */
    fastTokenEndpoint: z.boolean().default(true),
    ttl: z
      .object({
        authorizationCode: z.number().int().min(10).max(600).default(60),
        accessToken: z.number().int().min(60).max(86_400).default(3600),
        idToken: z.number().int().min(60).max(86_400).default(3600),
        refreshToken: z
          .number()
          .int()
          .min(300)
          .default(30 * 86_400),
        clientCredentials: z.number().int().min(60).max(86_400).default(3600),
        /** The OIDC session (SSO) cookie and record; it also ends when the Gatehouse session does. */
        session: z
          .number()
          .int()
          .min(300)
          .default(14 * 86_400),
        grant: z
          .number()
          .int()
          .min(300)
          .default(365 * 86_400),
        interaction: z.number().int().min(60).max(86_400).default(3600),
      })
      .prefault({}),
    /** OpenID Connect Back-Channel Logout deliveries (backchannel.ts). */
    backchannelLogout: z
      .object({
        /** Seconds a notice is retried before it is given up (default a day). */
        maxRetryAge: z
          .number()
          .int()
          .min(60)
          .max(30 * 86_400)
          .default(86_400),
      })
      .prefault({}),
    /**
     * Dynamic client registration (RFC 7591 / 7592) at `POST /oauth2/register`, with an initial
     * access token from `gatehouse oidc registration-token create` (or the panel). Off by default.
     */
    registration: z
      .object({
        enabled: z.boolean().default(false),
        /**
         * Hosts a self-registered client's back-channel logout URI may reach even on loopback or
         * private addresses (otherwise refused, as oidc-provider does for outgoing requests).
         */
        allowedHosts: z.array(z.string().min(1)).default([]),
        /** When non-empty, the only hosts a self-registered client's redirect URIs may name. */
        redirectHosts: z.array(z.string().min(1)).default([]),
        /** How many clients one initial access token may register in all (RFC 7591 §3; its uses count apart). */
        maxClientsPerToken: z.number().int().min(1).max(100_000).default(10),
        /**
         * Registrations per source (an IPv4 address, an IPv6 /64) at `POST /oauth2/register`, counted by
         * the HTTP rate limiter (`rateLimit.enabled`, its storage) in `window` seconds.
         */
        rateLimit: z.object({ window: z.number().int().min(1).default(60), max: z.number().int().min(1).default(10) }).prefault({}),
      })
      .prefault({}),
    /**
     * Deprecated alias of `groups.*` (the one group-name rule, features/groups): still applied
     * where set (`userRole` → `groups.roles`, `roles` → `groups.memberRoles`), with one warning at
     * start-up. Unset by default.
     */
    groups: z
      .object({
        organizations: z.boolean().optional(),
        roles: z.boolean().optional(),
        teams: z.boolean().optional(),
        userRole: z.boolean().optional(),
      })
      .optional(),
  })
  .prefault({})

export type OidcProviderConfig = z.output<typeof oidcProviderConfig>

/** The config sections this feature owns, by path (its defineFeature declares them; bin/gen-features.js mounts them). */
export const configSections = { oidcProvider: oidcProviderConfig }

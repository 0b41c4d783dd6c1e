import { z } from 'zod'

/** `#rgb` or `#rrggbb`: the hosted pages' accent colour. */
export const HEX_COLOR = /^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/

/**
 * `hostedPages.*`: Gatehouse's own end-user pages under `{basePath}/ui/` (sign-in, consent,
 * sign-out, error, sign-up, forgot and reset password, email-verification landing). The name they
 * show is better-auth's top-level `appName` (unset: `mail.appName`).
 */
export const hostedPagesConfig = z
  .object({
    /** Serve the pages (off: `/ui/*` answers 404). */
    enabled: z.boolean().default(true),
    /** Logo shown above each page: an http(s) URL (its origin is added to the pages' img-src) or a path on this server. */
    logo: z
      .string()
      .max(2048)
      .refine((v) => /^https?:\/\/[^\s]+$/i.test(v) || /^\/[^\s/\\][^\s]*$/.test(v), 'must be an http(s) URL or a path starting with /')
      .optional(),
    /** Accent colour (buttons, links), `#rrggbb`. Button text is black or white, whichever reads better. */
    color: z.string().regex(HEX_COLOR, 'must be a hex colour such as #1c64d8').default('#1c64d8'),
  })
  .prefault({})

export type HostedPagesConfig = z.output<typeof hostedPagesConfig>

/** The config sections this feature owns, by path (its defineFeature declares them; bin/gen-features.js mounts them). */
export const configSections = { hostedPages: hostedPagesConfig }

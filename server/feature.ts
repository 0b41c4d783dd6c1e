import type { AuthContext, RequestMeta } from './auth/context.js'
import type { SessionWithUser } from './auth/sessions.js'
import type { Logger } from './gatehouse.js'
import type { Route } from './http/route.js'
import type { PanelEnv } from './panel/service.js'

/**
 * A capability declared in one object: what it adds to the HTTP API, the control panel and the
 * server's lifecycle. The composition root (gatehouse.ts) and the panel service read the list in
 * features/index.ts; nothing else needs to know a feature exists.
 *
 * Its config section is a zod object in the feature's config.ts, added under the plugin's key in
 * config/schema.ts; its tables sit in the feature's schema.ts, re-exported by db/schema.ts for
 * drizzle-kit; its panel contract (zod only, shared with the renderer) in panel-contract.ts, listed
 * in features/panel-contracts.ts.
 */
export interface Feature {
  /** better-auth's plugin id where one exists (`api-key`, `jwt`, `two-factor`, …). */
  id: string
  /** Endpoints under the base path. */
  routes?: Route[]
  /** The handlers of the operations the feature declares in its panel contract. */
  panel?: (env: PanelEnv) => Record<string, (input: never) => unknown>
  /**
   * Session resolution from something other than the session cookie (the api-key feature's
   * `enableSessionForAPIKeys`), asked first. Undefined when it does not apply; throws APIError to
   * refuse the request.
   */
  requestSession?: (ctx: AuthContext, request: Request, meta: RequestMeta) => SessionWithUser | undefined
  /** A get-session answer carrying a session is about to leave: add headers (the jwt feature's `set-auth-jwt`). */
  sessionAnswered?: (ctx: AuthContext, answer: SessionAnswer, headers: Headers) => void | Promise<void>
  /** Background work started with the server (jobs, caches); the returned function stops it. */
  start?: (runtime: FeatureRuntime) => (() => void | Promise<void>) | undefined
}

/** A get-session answer: the session and the public user (from the database or the cookie cache). */
export interface SessionAnswer {
  session: { id: string; userId: string; activeOrganizationId?: string | null }
  user: { id: string } & Record<string, unknown>
}

export interface FeatureRuntime {
  ctx: AuthContext
  logger: Logger
}

/** Identity at run time; the type checks the declaration where it is written. */
export const defineFeature = (feature: Feature): Feature => feature

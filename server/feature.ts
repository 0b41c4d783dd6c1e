import type { ZodType } from 'zod'
import type { GatehouseConfig } from './config/schema.js'
import type { AuthContext } from './core/context.js'
import type { CounterDeclaration } from './core/events.js'
import type { OAuthProviderSource } from './core/oauth-providers.js'
import type { RateLimitStore } from './core/rate-limit.js'
import type { Logger } from './log.js'
import type { FeatureHooks } from './http/feature-hooks.js'
import type { MailLayout } from './mail/types.js'
import type { PanelEnv } from './panel-frame/panel-env.js'

export type { FeatureHooks, FeatureRateRule, SecondFactorOutcome, SessionAnswer } from './http/feature-hooks.js'

/**
 * A capability declared in one object: its config sections, tables and error catalogue, and what
 * it adds to the HTTP API, the control panel and the server's lifecycle. The composition root
 * (gatehouse.ts) and the panel service read the list in features/index.ts; nothing else needs to
 * know a feature exists.
 *
 * Four aggregations are modules generated from the folders that list names (bin/gen-features.js),
 * because the types of the whole are built from them at compile time, and because the features' own
 * code imports them (a list built from `features` at run time would be an import cycle): the config
 * sections (features/config-sections.ts), the tables and the columns on core tables
 * (features/tables.ts, features/columns.ts; server/schema.ts assembles them, drizzle-kit reads it) and the panel
 * contracts (features/panel-contracts.ts, shared with the renderer).
 * tests/unit/feature-declarations.test.ts checks that they are current and hold exactly what the
 * features declare here, and that every feature's config.ts, schema.ts and errors.ts is declared.
 *
 * Its id, routes, rate rules and the hooks core and HTTP call are declared in `FeatureHooks`
 * (server/http/feature-hooks.ts), the part of a feature the lower floors may name.
 */
export interface Feature extends FeatureHooks {
  /**
   * The feature's config sections (its config.ts), by their path in the root config, with
   * better-auth's option names: `{ twoFactor: twoFactorConfig }`, `{ 'user.changeEmail': … }`; the
   * `configSections` its config.ts exports.
   */
  config?: Record<string, ZodType>
  /** The feature's drizzle tables (its schema.ts module), assembled by server/schema.ts. */
  tables?: Record<string, unknown>
  /**
   * The columns the feature adds to core tables (its columns.ts), by table, as better-auth plugins
   * declare `schema.user.fields`: server/schema.ts builds `user` and `session` with them, and
   * both dialects' migrations are generated from there. Beside the user columns, columns.ts's
   * `xUserDefaults(config)` gives a new user's value for each (core users.ts unsavedUser and the
   * import build users from it, so core names no feature's column).
   */
  columns?: { user?: Record<string, unknown>; session?: Record<string, unknown> }
  /** The feature's error catalogue (its errors.ts): the only place its messages are spelled. */
  errors?: Record<string, unknown>
  /**
   * The mail the feature sends, rendered with sample data for the Email view's previews: kind →
   * message. `sample` gives the application name, a sample recipient and absolute links.
   */
  mailPreviews?: (sample: MailSample) => Record<string, () => RenderedMail>
  /**
   * The counters the feature counts (`ctx.events.count(name, …labelValues)`): the metrics feature
   * registers each when metrics are on (docs/OBSERVABILITY.md lists them), so an observable feature
   * never edits core/events.ts or the metrics registry.
   */
  metrics?: readonly CounterDeclaration[]
  /** The handlers of the operations the feature declares in its panel contract. */
  panel?: (env: PanelEnv) => Record<string, (input: never) => unknown>
  /** Files the browser panel serves at GET /panel/download/<kind>/<name> (null: no such file). */
  panelDownloads?: (env: PanelEnv) => Record<string, (name: string) => PanelDownload | null>
  /** Background work started with the server (jobs, caches); the returned function stops it. */
  start?: (runtime: FeatureRuntime) => (() => void | Promise<void>) | undefined
  /**
   * Awaited by `listen()` once the HTTP listener is up: what `start` began that must work for the
   * server to be up (the LDAP listener). A rejection stops start-up; its message is one line naming
   * the config field (`ldap.address: cannot listen on …`). Undefined: nothing to wait for.
   */
  ready?: (ctx: AuthContext) => Promise<void> | undefined
  /**
   * OAuth 2.0 / OpenID Connect providers this feature adds to the social sign-in engine (the
   * generic-oauth feature): /sign-in/social and /callback/<id> run them like the built-in ones.
   */
  oauthProviders?: OAuthProviderSource
  /**
   * What a configuration gets wrong about the stored data, which the schema cannot see (organization:
   * a role declared with an organization's slug), each issue naming its config field. Asked before the
   * listener opens (an issue is a ConfigError) and before the panel saves a change (server/config/checks.ts).
   */
  configProblems?: (ctx: AuthContext, config: GatehouseConfig) => Promise<ConfigIssue[]>
  /**
   * The listeners this feature opens besides the HTTP one (LDAP, LDAPS, metrics), each with its state
   * now: the one source of the panel's `listeners.state` (Overview, LDAP view, Metrics).
   */
  listeners?: (ctx: AuthContext) => ListenerState[]
  /**
   * Binds the addresses a configuration about to be saved asks this feature's listeners to take,
   * before anything is stored (server/config-checks.ts `bindListeners`): rejects with a
   * ListenerRefusal naming the field, the address and the OS error when one cannot be bound (the save
   * is refused, the running listeners keep serving); else resolves with the bound listeners, which the
   * config change that follows adopts in place of the old ones (`release` closes them if it does not).
   * Undefined: nothing to bind (the addresses are those running, or the listener is off).
   */
  bindListeners?: (ctx: AuthContext, next: GatehouseConfig) => Promise<BoundListeners | undefined>
  /** Runs when a server opens a data directory, before its database is opened (staged restores). */
  beforeOpen?: (dataDir: string, logger: Logger) => void
  /**
   * The group names this feature's configuration or managed objects require of a person (forward
   * auth's rules, SAML service providers' allowed groups), each with where it is named. Their
   * organizations are reserved: only an administrator may create one with that slug, so nobody can
   * claim such a name by creating it; a name no organization or team holds yet is a warning at start
   * and in the panel (organization/slugs.ts reservedSlugs, groups/claims.ts).
   */
  namedGroups?: (ctx: AuthContext) => NamedGroup[] | Promise<NamedGroup[]>
  /**
   * The roles (admin's roles, `admin.roles` and the built-in ones) this feature's configuration names
   * (forward-auth rules' `subject.roles`, `ldap.searchRoles`, two-factor's enforcement roles, admin's
   * own `adminRoles` and `defaultRole`), each with where: an edit that removes or renames a role
   * lists them first (groups/claims.ts roleChangeImpact, the panel's `groups.roleImpact`).
   */
  namedRoles?: (ctx: AuthContext) => NamedRole[]
}

/**
 * A `gatehouse <name>` command a feature adds: declared in the feature's `commands.ts`
 * (`export const commands: CommandDeclaration[] = [ … ]`), gathered by bin/gen-features.js into
 * server/features/commands.ts, from which server/cli.ts builds `gatehouse --help`, each command's
 * `--help` and the dispatch. The declaration holds words and a loader only, so the CLI's start-up
 * loads no command's code (nor its libraries) before that command runs.
 */
export interface CommandDeclaration {
  /** The word after `gatehouse`. */
  name: string
  /** Its line in `gatehouse --help`, after `gatehouse ` (`jwt rotate|keys [options]`). */
  synopsis: string
  /** What it is for, in parentheses after the synopsis. */
  summary?: string
  /** Printed for `--help`/`-h` anywhere on its line; absent: the command answers its own help. */
  usage?: string
  /** Runs it with the arguments after its name (engine flags taken out); resolves to the exit code. */
  run: (args: string[], env: NodeJS.ProcessEnv) => Promise<number>
}

/**
 * What a feature imports from other features, each with why: its `dependencies.ts`
 * (`export const dependsOn: FeatureDependencies = { 'organization/store.ts': 'why', … }`), a file
 * (`folder/file.ts`) or a whole folder (`folder`). bin/gen-features.js gathers them into
 * server/features/dependencies.json, of which .dependency-cruiser.cjs makes one rule per feature,
 * and into docs/ARCHITECTURE.md's list of dependencies; an import of another feature that is not
 * declared fails `npm run check:deps`.
 */
export type FeatureDependencies = Readonly<Record<string, string>>

/**
 * A feature's checks across its config (and the sections it names), beside its sections in its
 * config.ts (`export const configChecks: ConfigCheck<{ section: Type }> = (config) => [...]`):
 * gathered by bin/gen-features.js and run by config-schema.ts on every parse of the whole config, so
 * a refused value names its path wherever the config comes from (file, panel, CLI).
 */
export type ConfigCheck<Sections> = (config: Sections) => { path: string[]; message: string }[]

/** A group name a rule requires (`acme`, `acme:owner`, `acme/ops`, a role), and where it is written. */
export interface NamedGroup {
  /** For people: `forwardAuth.rules[2].subject.teams`, `SAML app "Wiki"`. */
  where: string
  name: string
  /**
   * Matched against the person's group names (SAML's allowed groups), so the `groups.*` switches
   * decide whether anyone holds it; absent: matched on memberships themselves (forward auth's rules).
   */
  byGroupName?: boolean
}

/** A role a feature's configuration names, where, and what removing the role does to that rule. */
export interface NamedRole {
  /** The config key: `forwardAuth.rules[0].subject.roles`, `ldap.searchRoles`. */
  where: string
  name: string
  /** What removing the role does there, when it is more than "names a role nobody can be given". */
  effect?: string
}

export interface PanelDownload {
  file: string
  filename: string
  type: string
}

/** A configuration problem, at the dotted path of the field it concerns. */
/** One listener's state (`listeners`): what the Overview and each view show. */
export interface ListenerState {
  /** `ldap`, `ldaps`, `metrics`. */
  name: string
  /** The config field its address is set in. */
  field: string
  /** listening; stopped (switched off, or not configured); failed (wanted, and not bound: `lastError` says why). */
  state: 'listening' | 'stopped' | 'failed'
  /** Where it listens (`host:port`, the port bound), else the address it is configured with, if any. */
  address: string | null
  /** TCP connections open now. */
  connections: number
  /** The last time it could not be bound (at start, or by a change applied), and why; epoch ms. */
  lastError: { message: string; at: number } | null
}

/** Listeners bound for a configuration not yet stored (`bindListeners`). */
export interface BoundListeners {
  release(): Promise<void>
}

/** A listener's address that cannot be bound: the save asking for it is refused with this message. */
export class ListenerRefusal extends Error {
  constructor(
    /** The config field: `ldap.address`, `metrics.address`. */
    readonly field: string,
    message: string,
  ) {
    super(message)
    this.name = 'ListenerRefusal'
  }
}

export interface ConfigIssue {
  path: string
  message: string
}

export interface FeatureRuntime {
  ctx: AuthContext
  logger: Logger
  /** null: in-memory, nothing on disk. */
  dataDir: string | null
  /** The migrations folder the database was opened with. */
  migrationsFolder: string
  /**
   * Calls `listener` after every change of the effective config (the panel's, another instance's);
   * returns the unsubscribe. For background work a live switch must start or stop (the LDAP
   * listener); absent where no config can change (tool contexts).
   */
  onConfigChange?: (listener: () => void) => () => void
  /**
   * The request rate limiter's counts (`rateLimit.storage`, as the HTTP API uses them), for a face
   * that limits its own requests per source (LDAP binds); absent in tool contexts.
   */
  rateLimitStore?: () => RateLimitStore
}

/** Identity at run time; the type checks the declaration where it is written. */
export const defineFeature = (feature: Feature): Feature => feature

/** What a mail preview is rendered with (the Email view). */
export interface MailSample {
  appName: string
  user: { name: string; email: string }
  /** An absolute URL under the API's base path. */
  link(path: string): string
  now: number
}

export interface RenderedMail {
  subject: string
  text: string
  html: string
  /** What renderMail made it from: the Email view re-renders it with an edited template. */
  layout?: MailLayout
}

/** `host:port` of a bound listener, an IPv6 host in brackets (`[::1]:389`). */
export const hostPort = (at: { host: string; port: number }): string => `${at.host.includes(':') ? `[${at.host}]` : at.host}:${at.port}`

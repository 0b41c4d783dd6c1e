/**
 * The part of panva's oidc-provider 9 (untyped ESM, Koa based) that Gatehouse uses: the OIDC
 * provider feature and the loopback OpenID provider of the social sign-in tests.
 */
declare module 'oidc-provider' {
  import type { IncomingMessage, Server, ServerResponse } from 'node:http'

  export interface AccountClaims {
    sub: string
    [claim: string]: unknown
  }
  export interface Account {
    accountId: string
    claims(use: string, scope: string, claims?: unknown, rejected?: string[]): Promise<AccountClaims> | AccountClaims
  }
  export type AdapterPayload = Record<string, unknown> & {
    grantId?: string
    uid?: string
    userCode?: string
    consumed?: number
    exp?: number
    jti?: string
    accountId?: string
    clientId?: string
  }
  export interface Adapter {
    upsert(id: string, payload: AdapterPayload, expiresIn: number): Promise<void>
    find(id: string): Promise<AdapterPayload | undefined>
    findByUserCode(userCode: string): Promise<AdapterPayload | undefined>
    findByUid(uid: string): Promise<AdapterPayload | undefined>
    consume(id: string): Promise<void>
    destroy(id: string): Promise<void>
    revokeByGrantId(grantId: string): Promise<void>
  }
  /** Koa's context as the provider hands it to configuration functions (only what we read). */
  export interface KoaContextWithOIDC {
    req: IncomingMessage
    res: ServerResponse
    method: string
    path: string
    status: number
    body: unknown
    type: string
    headers: Record<string, string | string[] | undefined>
    redirect(url: string): void
    oidc: {
      route: string
      uid: string
      client?: ClientInstance
      session?: { accountId?: string; uid?: string; jti?: string; destroy(): Promise<void> }
      params?: Record<string, unknown>
      entities: Record<string, unknown>
      account?: Account
      prompts?: Set<string>
      [key: string]: unknown
    }
  }
  export interface ClientInstance {
    clientId: string
    clientName?: string
    logoUri?: string
    clientSecret?: string
    clientAuthMethod: string
    grantTypeAllowed(type: string): boolean
    [key: string]: unknown
  }
  export interface Configuration {
    adapter?: new (name: string) => Adapter
    clients?: Record<string, unknown>[]
    findAccount?: (ctx: KoaContextWithOIDC, sub: string, token?: unknown) => Promise<Account | undefined> | Account | undefined
    claims?: Record<string, string[] | null>
    conformIdTokenClaims?: boolean
    cookies?: { keys?: string[]; long?: Record<string, unknown>; short?: Record<string, unknown>; names?: Record<string, string> }
    pkce?: { required?: (ctx: KoaContextWithOIDC, client: ClientInstance) => boolean }
    features?: Record<string, Record<string, unknown> & { enabled: boolean }>
    jwks?: { keys: Record<string, unknown>[] }
    ttl?: Record<string, number | ((ctx: KoaContextWithOIDC, token: unknown, client: ClientInstance) => number)>
    [option: string]: unknown
  }
  export interface InteractionDetails {
    uid: string
    prompt: { name: string; reasons: string[]; details: Record<string, unknown> }
    params: Record<string, unknown> & { client_id?: string; scope?: string; redirect_uri?: string }
    session?: { accountId?: string; uid?: string }
    grantId?: string
    lastSubmission?: Record<string, unknown>
    returnTo: string
    exp: number
  }
  export interface GrantInstance {
    jti: string
    accountId: string
    clientId: string
    getOIDCScope(): string
    getOIDCClaims(): string[]
    addOIDCScope(scope: string): void
    addOIDCClaims(claims: string[]): void
    addResourceScope(resource: string, scope: string): void
    save(): Promise<string>
  }
  export interface GrantConstructor {
    new (properties: { accountId: string; clientId: string }): GrantInstance
    find(id: string): Promise<GrantInstance | undefined>
  }
  export interface Interactions {
    url?: (ctx: KoaContextWithOIDC, interaction: { uid: string }) => string | Promise<string>
    policy?: unknown
  }
  export const interactionPolicy: {
    base(): unknown
    Check: new (
      reason: string,
      description: string,
      error: string,
      check: (ctx: KoaContextWithOIDC) => boolean | Promise<boolean>,
    ) => unknown
  }
  /** A signing key whose private part oidc-provider never sees (features.externalSigningSupport). */
  export class ExternalSigningKey {
    kid: string
    alg: string
    readonly use: string
    /** The public key (verification, the JWKS). */
    keyObject(): import('node:crypto').KeyObject
    /** The JWS signature of `data`. */
    sign(data: Buffer): Promise<Buffer | Uint8Array>
  }
  type OidcErrorClass = new (description?: string) => Error & { error: string; error_description?: string; status: number }
  export const errors: {
    InvalidClientMetadata: OidcErrorClass
    InvalidRedirectUri: OidcErrorClass
    InvalidRequest: OidcErrorClass
  } & Record<string, OidcErrorClass>
  export default class Provider {
    constructor(issuer: string, configuration?: Configuration)
    issuer: string
    proxy: boolean
    Client: {
      prototype: { compareClientSecret(actual: string): boolean | Promise<boolean> }
      find(id: string): Promise<ClientInstance | undefined>
    }
    Grant: GrantConstructor
    listen(port: number, host?: string, callback?: () => void): Server
    callback(): (req: IncomingMessage, res: ServerResponse) => Promise<void>
    on(event: string, listener: (...args: never[]) => void): this
    /** Koa middleware, run before oidc-provider's own routes. */
    use(middleware: (ctx: KoaContextWithOIDC, next: () => Promise<void>) => Promise<void>): this
    interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<InteractionDetails>
    interactionResult(
      req: IncomingMessage,
      res: ServerResponse,
      result: Record<string, unknown>,
      options?: { mergeWithLastSubmission?: boolean },
    ): Promise<string>
  }
}

/**
 * oidc-provider's own AsyncLocalStorage (lib/helpers/als.js): the Koa context of the request it is
 * serving, run by its app for each one (provider.ts switches it off while none is).
 */
declare module 'oidc-provider/lib/helpers/als.js' {
  import type { AsyncLocalStorage } from 'node:async_hooks'
  const als: AsyncLocalStorage<unknown>
  export default als
}

/** oidc-provider's guard of outgoing requests (lib/helpers/fetch_request.js): loopback, private and other special-use addresses. */
declare module 'oidc-provider/lib/helpers/fetch_request.js' {
  export function isSpecialUseIP(address: string): boolean
}

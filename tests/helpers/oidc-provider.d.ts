/** Just enough of oidc-provider 9 (untyped ESM, Koa based) for the loopback OpenID provider in the tests. */
declare module 'oidc-provider' {
  import type { Server } from 'node:http'

  export interface AccountClaims {
    sub: string
    [claim: string]: unknown
  }
  export interface Account {
    accountId: string
    claims(use: string, scope: string): Promise<AccountClaims> | AccountClaims
  }
  export interface Configuration {
    clients?: Record<string, unknown>[]
    findAccount?: (ctx: unknown, sub: string) => Promise<Account | undefined> | Account | undefined
    claims?: Record<string, string[]>
    conformIdTokenClaims?: boolean
    cookies?: { keys?: string[] }
    pkce?: { required?: (ctx: unknown, client: unknown) => boolean }
    features?: Record<string, { enabled: boolean }>
    jwks?: { keys: Record<string, unknown>[] }
    ttl?: Record<string, number>
  }
  export default class Provider {
    constructor(issuer: string, configuration?: Configuration)
    listen(port: number, host?: string, callback?: () => void): Server
    on(event: string, listener: (...args: unknown[]) => void): this
  }
}

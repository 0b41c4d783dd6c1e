import { AsyncLocalStorage } from 'node:async_hooks'

/**
 * The browser panel's sign-in relay (server/panel/auth.ts) calls the API's own endpoints
 * in-process; while it does, this scope names the panel page the browser is on (its origin and
 * host name). Only an in-process call can be inside it: nothing a network request carries (no
 * header) puts a request here. The passkey ceremonies read it (server/features/passkey/service.ts):
 * a passkey made or used on the panel's page is bound to the panel's origin, not the API's.
 */
export interface PanelPage {
  /** `http://localhost:4281` */
  origin: string
  /** `localhost` */
  hostname: string
}

const scope = new AsyncLocalStorage<PanelPage>()

export function runFromPanelPage<T>(page: PanelPage, body: () => T): T {
  return scope.run(page, body)
}

/** The panel page an in-process relayed request comes from, or null for every other request. */
export function panelPage(): PanelPage | null {
  return scope.getStore() ?? null
}

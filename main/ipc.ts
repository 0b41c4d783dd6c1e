import { userInfo } from 'node:os'
import type { IpcMain, IpcMainInvokeEvent } from 'electron'
import type { PanelCaller } from '../server/core/panel-caller.js'
import { channelOf, opNames, type PanelResult } from '../server/panel/contract.js'
import type { PanelService } from '../server/panel/service.js'
import { openExternalSafely } from './window.js'

export const OPEN_EXTERNAL_CHANNEL = 'gatehouse:open-external'

const refused: PanelResult = {
  ok: false,
  error: { code: 'FORBIDDEN_SENDER', message: 'This request did not come from the Gatehouse window', status: 403 },
}

/**
 * Registers every contract operation on IPC. Each call is answered only if it comes from the
 * main frame of the app's own window (never an iframe, another window or a navigated page), and
 * its input is validated by the contract's schema (inside `dispatch`) before any domain code runs.
 */
export function registerPanelIpc(
  ipcMain: Pick<IpcMain, 'handle' | 'removeHandler'>,
  service: PanelService,
  isTrustedSender: (event: IpcMainInvokeEvent) => boolean,
): () => void {
  for (const op of opNames) {
    ipcMain.handle(channelOf(op), (event, input: unknown) => {
      if (!isTrustedSender(event)) return refused
      return service.dispatch(op, input)
    })
  }
  ipcMain.handle(OPEN_EXTERNAL_CHANNEL, (event, url: unknown) => {
    if (!isTrustedSender(event) || typeof url !== 'string') return false
    return openExternalSafely(url)
  })
  return () => {
    for (const op of opNames) ipcMain.removeHandler(channelOf(op))
    ipcMain.removeHandler(OPEN_EXTERNAL_CHANNEL)
  }
}

/**
 * Who the desktop app's panel acts as (issue 31 §1): the operating-system account running it. The
 * app is its local owner's, on their machine, with no listener anyone else can reach; a second
 * sign-in would guard nothing the OS session does not. Every audit event made from its panel
 * names that account (`detail.actor: "os:<name>"`, no user id). docs/ARCHITECTURE.md says why.
 */
export function desktopOperator(account: string = osAccountName()): PanelCaller {
  return { kind: 'os-account', account, meta: { ipAddress: null, userAgent: 'gatehouse-desktop' } }
}

function osAccountName(): string {
  try {
    return userInfo().username
  } catch {
    return process.env.USER ?? process.env.USERNAME ?? 'unknown'
  }
}

/** The sender check: the main frame of `window`, showing the app's own page. */
export function trustedSenderCheck(
  getMainFrame: () => IpcMainInvokeEvent['senderFrame'] | undefined,
  isAppURL: (url: string) => boolean,
): (event: IpcMainInvokeEvent) => boolean {
  return (event) => {
    const frame = event.senderFrame
    const main = getMainFrame()
    return Boolean(frame && main && frame === main && frame.parent === null && isAppURL(frame.url))
  }
}

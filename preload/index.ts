import { contextBridge, ipcRenderer } from 'electron'
import type { GatehouseBridge, PanelResult } from '../server/panel/contract.js'

/**
 * The renderer's only door to the app: `window.gatehouse.call(op, input)`. Operation names map to
 * IPC channels (`gatehouse:<op>`, as channelOf() in the contract); main validates every input and
 * checks the sender. Kept free of imports besides electron so it runs in the sandbox.
 */
const OPERATION = /^[a-z][A-Za-z]*\.[A-Za-z]+$/

const bridge: GatehouseBridge = {
  transport: 'ipc',
  call(op, input) {
    if (typeof op !== 'string' || !OPERATION.test(op)) {
      const refused: PanelResult<never> = {
        ok: false,
        error: { code: 'UNKNOWN_OPERATION', message: `Unknown operation ${String(op)}`, status: 404 },
      }
      return Promise.resolve(refused)
    }
    return ipcRenderer.invoke(`gatehouse:${op}`, input)
  },
  async openExternal(url) {
    await ipcRenderer.invoke('gatehouse:open-external', String(url))
  },
}

contextBridge.exposeInMainWorld('gatehouse', Object.freeze(bridge))

import { accessSync, chmodSync, constants, existsSync, mkdirSync, statSync } from 'node:fs'
import { dirname } from 'node:path'
import type { MessageBoxOptions } from 'electron'

/**
 * Start-up failures of the desktop app, each turned into a native dialog that says what happened
 * and what to do. The dialogs run before any window exists; whatever the user picks, the app
 * either goes on or quits: never a process left running with no window and no tray.
 */

export interface Dialogs {
  showMessageBox(options: MessageBoxOptions): Promise<{ response: number }>
}

export interface Prompt {
  type: 'error' | 'warning' | 'info' | 'question'
  title: string
  message: string
  detail: string
  buttons: string[]
}

/** Shows a dialog; resolves with the label of the button chosen (Escape = the last button). */
export async function ask(dialogs: Dialogs, prompt: Prompt): Promise<string> {
  const { response } = await dialogs.showMessageBox({
    type: prompt.type,
    title: prompt.title,
    message: prompt.message,
    detail: prompt.detail,
    buttons: prompt.buttons,
    defaultId: 0,
    cancelId: prompt.buttons.length - 1,
    noLink: true,
  })
  return prompt.buttons[response] ?? prompt.buttons[prompt.buttons.length - 1]!
}

export const QUIT = 'Quit'
export const RETRY = 'Try again'
export const OPEN_FOLDER = 'Open the data folder'

/** The nearest folder that exists (to open in the file manager when the data folder cannot be made). */
export function existingAncestor(path: string): string {
  let current = path
  while (!(existsSync(current) && statSync(current).isDirectory()) && dirname(current) !== current) current = dirname(current)
  return current
}

/** Creates the data directory owner-only (0700) and checks it can be written; throws otherwise. */
export function ensureDataDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  if (!statSync(dir).isDirectory()) throw Object.assign(new Error(`${dir} is not a folder`), { code: 'ENOTDIR' })
  // It holds the database and the secret: owner only, also when an older version made it 0755.
  if (process.platform !== 'win32') chmodSync(dir, 0o700)
  accessSync(dir, constants.W_OK | constants.R_OK | constants.X_OK)
}

export const dataDirPrompt = (dir: string, error: NodeJS.ErrnoException): Prompt => ({
  type: 'error',
  title: 'Gatehouse cannot use its data folder',
  message: 'Gatehouse cannot create or write its data folder.',
  detail:
    `${dir}\n\n${error.code ? `${error.code}: ` : ''}${error.message}\n\n` +
    'The folder holds the database, the settings and the auth secret. Check that it (or its parent) ' +
    'belongs to your user account and is writable, that the disk is not full or read-only, then try again. ' +
    'GATEHOUSE_DATA_DIR chooses another folder.',
  buttons: [RETRY, OPEN_FOLDER, QUIT],
})

export const badOptionPrompt = (message: string): Prompt => ({
  type: 'error',
  title: 'Gatehouse: a start-up setting is wrong',
  message: 'Gatehouse cannot start: a start-up setting is wrong.',
  detail: `${message}\n\nFix or remove the GATEHOUSE_* environment variable (or the file) named above, then start Gatehouse again.`,
  buttons: [QUIT, OPEN_FOLDER],
})

export const RESET_SECRET = 'Reset the secret…'
export const WITHOUT_KEYCHAIN = 'Keep it in a private file'

export const secretPrompt = (kind: 'unavailable' | 'refused' | 'decrypt', message: string, sealed: boolean): Prompt => {
  const what = {
    unavailable: 'The system keychain is not available, so Gatehouse cannot read its auth secret.',
    refused: 'The system keychain refused Gatehouse access to its auth secret.',
    decrypt: 'Gatehouse cannot decrypt its auth secret with the system keychain.',
  }[kind]
  const todo = {
    unavailable: 'Unlock or start the keychain (on Linux: GNOME Keyring or KWallet, unlocked at login), then try again.',
    refused:
      'Try again and choose "Allow" (or "Always Allow") when the keychain asks. On macOS an unsigned or updated app is asked again after each update.',
    decrypt:
      'This happens when the keychain entry changed (a new user account, a restored backup, another keyring). If the old keychain can come back, restore it and try again.',
  }[kind]
  return {
    type: 'error',
    title: 'Gatehouse: the auth secret is locked',
    message: what,
    detail: `${message}\n\n${todo}${sealed ? '\n\nAs a last resort, reset the secret: Gatehouse makes a new one (you will be asked to confirm).' : ''}`,
    buttons: sealed ? [RETRY, RESET_SECRET, QUIT] : [RETRY, WITHOUT_KEYCHAIN, QUIT],
  }
}

export const RESET_CONFIRM = 'Reset the secret'
export const CANCEL = 'Cancel'

export const resetSecretPrompt = (dataDir: string): Prompt => ({
  type: 'warning',
  title: 'Reset the auth secret?',
  message: 'Resetting the secret cannot be undone from inside Gatehouse.',
  detail:
    'A new secret is made and the old one is set aside in the data folder (secret.enc.<date>.bak). With the new secret:\n' +
    '• every user is signed out (sessions and signed cookies no longer verify);\n' +
    '• sealed secrets can no longer be read: social provider client secrets and the SMTP password must be entered again in the panel;\n' +
    '• pending verification and reset links stop working.\n\n' +
    `Users, passwords and settings stay. Data folder: ${dataDir}`,
  buttons: [RESET_CONFIRM, CANCEL],
})

export const USE_PORT = (port: number) => `Use port ${port}`

export const portPrompt = (host: string, port: number, suggested: number | null, fixedBy: string | undefined): Prompt => ({
  type: 'error',
  title: 'Gatehouse: the port is taken',
  message: `Port ${port} on ${host} is already in use.`,
  detail:
    'Another program (or another Gatehouse) listens on it, so the API cannot start there.\n\n' +
    (suggested
      ? `Port ${suggested} is free. Apps must then call Gatehouse on that port${fixedBy ? '' : '; the choice is saved in the Network settings'}.`
      : 'No free port was found nearby; close the other program and try again.') +
    (fixedBy ? `\n\nThe port is set by ${fixedBy}: change it there to make another port permanent.` : ''),
  buttons: suggested ? [USE_PORT(suggested), RETRY, QUIT] : [RETRY, QUIT],
})

export const failurePrompt = (error: Error): Prompt => ({
  type: 'error',
  title: 'Gatehouse could not start',
  message: 'Gatehouse could not start.',
  detail: `${error.message}\n\nTry again; if it keeps failing, look in the data folder (the database, config.json and network.json live there) or start Gatehouse from a terminal to see its log.`,
  buttons: [RETRY, OPEN_FOLDER, QUIT],
})

export const unprotectedSecretPrompt = (protection: string): Prompt => ({
  type: 'warning',
  title: 'Gatehouse: the auth secret is not encrypted',
  message: 'No system keychain protects the auth secret on this computer.',
  detail: protection,
  buttons: ['OK'],
})

export const LOOPBACK_THIS_TIME = 'Listen on this computer only'

export const interfaceGonePrompt = (message: string): Prompt => ({
  type: 'warning',
  title: 'Gatehouse: the network interface is gone',
  message: 'The network interface Gatehouse should listen on has no address now.',
  detail: `${message}\n\nGatehouse can start listening on this computer only (127.0.0.1) for now; other machines cannot reach it until you choose an interface again in Network. The saved setting is kept.`,
  buttons: [LOOPBACK_THIS_TIME, QUIT],
})

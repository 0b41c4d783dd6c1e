import { randomBytes } from 'node:crypto'
import { chmodSync, existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

/** The subset of Electron's safeStorage the app uses (async API, Electron ≥ 40). */
export interface SafeStorageLike {
  isAsyncEncryptionAvailable(): Promise<boolean>
  encryptStringAsync(plain: string): Promise<Buffer>
  decryptStringAsync(encrypted: Buffer): Promise<{ result: string; shouldReEncrypt: boolean }>
  /** Linux only: which secret store Chromium picked (`basic_text` = none, a fixed key). */
  getSelectedStorageBackend?(): string
}

export interface SecretResult {
  secret: string
  /** 'safeStorage': encrypted with the OS keychain; 'file': plaintext file readable by the owner only. */
  storage: 'safeStorage' | 'file'
  /** What protects the secret, in one plain sentence for the user. */
  protection: string
  /** The secret was created, moved or re-stored during this start. */
  changed: boolean
}

export type SecretFailure = 'unavailable' | 'refused' | 'decrypt'

/** The auth secret could not be read or stored; `kind` says why (the start-up dialog explains it). */
export class SecretError extends Error {
  constructor(
    readonly kind: SecretFailure,
    message: string,
    /** An encrypted secret exists (resetting it is one way out). */
    readonly sealed: boolean,
  ) {
    super(message)
    this.name = 'SecretError'
  }
}

function writePrivate(file: string, data: string | Buffer): void {
  writeFileSync(file, data, { mode: 0o600 })
  chmodSync(file, 0o600)
}

/** The system's secret store by name, for messages. */
export function keychainName(platform: NodeJS.Platform, backend: string | null): string {
  if (platform === 'darwin') return 'the macOS Keychain'
  if (platform === 'win32') return 'Windows DPAPI (your Windows account)'
  if (backend?.startsWith('kwallet')) return 'KWallet'
  if (backend === 'gnome_libsecret') return 'the Secret Service keyring (GNOME Keyring or compatible)'
  return 'the system keyring'
}

/** Chromium's backends that do not protect anything: a fixed key, or none found. */
const WEAK_BACKENDS = new Set(['basic_text', 'unknown'])

const refusal = /denied|cancel|refus|not allowed|user interaction|authoriz/i

export interface SecretOptions {
  platform?: NodeJS.Platform
  /** Store without the keychain even if one is available (the user chose it after a refusal). */
  withoutKeychain?: boolean
}

/**
 * The auth secret of the desktop app, encrypted at rest with safeStorage (the OS keychain) when a
 * real keychain is there. On Linux, Chromium's `basic_text` backend "encrypts" with a fixed key:
 * that is no protection, so the secret is then kept as a 0600 file and the result says so plainly.
 * A plaintext secret left by the headless server in the same data directory is migrated into the
 * encrypted file. Provider client secrets and the SMTP password are sealed by the server with a
 * key derived from this secret.
 */
export async function loadOrCreateSecret(
  dataDir: string,
  safeStorage: SafeStorageLike,
  options: SecretOptions = {},
): Promise<SecretResult> {
  const platform = options.platform ?? process.platform
  const encryptedFile = join(dataDir, 'secret.enc')
  const plainFile = join(dataDir, 'secret')
  const backend = platform === 'linux' && safeStorage.getSelectedStorageBackend ? safeStorage.getSelectedStorageBackend() : null
  const weak = backend !== null && WEAK_BACKENDS.has(backend)
  const available = !weak && !options.withoutKeychain && (await safeStorage.isAsyncEncryptionAvailable().catch(() => false))
  const keychain = keychainName(platform, backend)
  const fileProtection = weak
    ? `No system keyring is available (Chromium's "${backend}" store), so the secret is NOT encrypted: it is kept in ${plainFile}, readable by your user account only (mode 0600). Anyone who can read your files (or root) can read it. Install and unlock a keyring such as GNOME Keyring or KWallet, then restart Gatehouse, to have it encrypted.`
    : `The secret is NOT encrypted: it is kept in ${plainFile}, readable by your user account only (mode 0600).`
  const keychainProtection = `The secret is encrypted with ${keychain}; only your user account can decrypt it.`

  const decrypt = async (): Promise<string> => {
    try {
      const { result, shouldReEncrypt } = await safeStorage.decryptStringAsync(readFileSync(encryptedFile))
      if (shouldReEncrypt && !weak) writePrivate(encryptedFile, await safeStorage.encryptStringAsync(result))
      return result
    } catch (e) {
      const message = (e as Error).message
      if (refusal.test(message)) throw new SecretError('refused', `${keychain} refused to unlock the auth secret (${message})`, true)
      throw new SecretError('decrypt', `The auth secret in ${encryptedFile} could not be decrypted with ${keychain} (${message})`, true)
    }
  }

  if (existsSync(encryptedFile)) {
    if (weak) {
      // Sealed earlier with the fixed key: it is plaintext in all but name. Keep it honestly.
      const secret = await decrypt()
      writePrivate(plainFile, `${secret}\n`)
      rmSync(encryptedFile)
      return { secret, storage: 'file', protection: fileProtection, changed: true }
    }
    if (!available) {
      throw new SecretError('unavailable', `The auth secret is encrypted with ${keychain}, which is not available now`, true)
    }
    return { secret: await decrypt(), storage: 'safeStorage', protection: keychainProtection, changed: false }
  }

  const existing = existsSync(plainFile) ? readFileSync(plainFile, 'utf8').trim() : ''
  const secret = existing || randomBytes(32).toString('base64url')
  if (available) {
    let sealed: Buffer
    try {
      sealed = await safeStorage.encryptStringAsync(secret)
    } catch (e) {
      throw new SecretError('refused', `${keychain} refused to store the auth secret (${(e as Error).message})`, false)
    }
    writePrivate(encryptedFile, sealed)
    if (existing) rmSync(plainFile)
    return { secret, storage: 'safeStorage', protection: keychainProtection, changed: true }
  }
  if (!existing) writePrivate(plainFile, `${secret}\n`)
  return { secret, storage: 'file', protection: fileProtection, changed: !existing }
}

/**
 * Puts the sealed secret aside (secret.enc → secret.enc.<time>.bak) so a new one is made at the
 * next start. Sessions end, and values sealed with the old secret can no longer be opened.
 */
export function setSecretAside(dataDir: string, now = new Date()): string | null {
  const encryptedFile = join(dataDir, 'secret.enc')
  if (!existsSync(encryptedFile)) return null
  const aside = `${encryptedFile}.${now.toISOString().replace(/[:.]/g, '-')}.bak`
  renameSync(encryptedFile, aside)
  return aside
}

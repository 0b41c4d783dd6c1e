import { chmodSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'

/** The subset of Electron's safeStorage the app uses (async API, Electron ≥ 40). */
export interface SafeStorageLike {
  isAsyncEncryptionAvailable(): Promise<boolean>
  encryptStringAsync(plain: string): Promise<Buffer>
  decryptStringAsync(encrypted: Buffer): Promise<{ result: string; shouldReEncrypt: boolean }>
}

export interface SecretResult {
  secret: string
  /** 'safeStorage': encrypted with the OS keychain; 'file': plaintext file readable by the owner only. */
  storage: 'safeStorage' | 'file'
}

function writePrivate(file: string, data: string | Buffer): void {
  writeFileSync(file, data, { mode: 0o600 })
  chmodSync(file, 0o600)
}

/**
 * The auth secret of the desktop app, encrypted at rest with safeStorage (the OS keychain) when
 * it is available. A plaintext secret left by the headless server in the same data directory is
 * migrated into the encrypted file. Without safeStorage the headless behaviour applies (mode 0600).
 * Provider client secrets and the SMTP password are encrypted by the server with a key derived from
 * this secret, so they are protected by the keychain too.
 */
export async function loadOrCreateSecret(dataDir: string, safeStorage: SafeStorageLike): Promise<SecretResult> {
  const encryptedFile = join(dataDir, 'secret.enc')
  const plainFile = join(dataDir, 'secret')
  const available = await safeStorage.isAsyncEncryptionAvailable().catch(() => false)

  if (existsSync(encryptedFile)) {
    if (!available) throw new Error('The auth secret is encrypted with the system keychain, which is not available now')
    const { result, shouldReEncrypt } = await safeStorage.decryptStringAsync(readFileSync(encryptedFile))
    if (shouldReEncrypt) writePrivate(encryptedFile, await safeStorage.encryptStringAsync(result))
    return { secret: result, storage: 'safeStorage' }
  }

  const existing = existsSync(plainFile) ? readFileSync(plainFile, 'utf8').trim() : ''
  const secret = existing || randomBytes(32).toString('base64url')
  if (available) {
    writePrivate(encryptedFile, await safeStorage.encryptStringAsync(secret))
    if (existing) rmSync(plainFile)
    return { secret, storage: 'safeStorage' }
  }
  if (!existing) writePrivate(plainFile, `${secret}\n`)
  return { secret, storage: 'file' }
}

import { createPrivateKey, createPublicKey, type JsonWebKey, type KeyObject, sign } from 'node:crypto'
import type { ExternalSigningKey } from 'oidc-provider'

/** A key as the jwt feature hands it to the provider (retired ones marked verify-only). */
export type SigningJwk = JsonWebKey & { kid: string; alg: string; key_ops?: string[] }

/** Node's parameters for each JWS algorithm an ID token may be signed with. */
const ALGORITHMS: Record<string, { digest: string | null; dsaEncoding?: 'ieee-p1363' }> = {
  RS256: { digest: 'sha256' },
  ES256: { digest: 'sha256', dsaEncoding: 'ieee-p1363' },
  EdDSA: { digest: null },
}

/**
 * The provider's live signing keys as oidc-provider's ExternalSigningKey: each signature is one
 * synchronous `crypto.sign` with a key object parsed once, instead of jose's WebCrypto path (a
 * key import and a job on the thread pool per ID token; about 0.1 ms of CPU for EdDSA, where
 * `crypto.sign` takes 0.04 ms). The signatures are the same JWS (RS256 PKCS#1 v1.5, ES256 r||s,
 * Ed25519). Retired keys (verify only) stay plain JWKs: oidc-provider never signs with them but
 * still verifies what they signed (id_token_hint).
 */
export function nodeSigningKeys(Base: typeof ExternalSigningKey, keys: readonly SigningJwk[]): unknown[] {
  class NodeSigningKey extends Base {
    readonly #private: KeyObject
    readonly #public: KeyObject
    readonly #digest: string | null
    readonly #dsaEncoding: 'ieee-p1363' | undefined

    constructor(jwk: SigningJwk, algorithm: { digest: string | null; dsaEncoding?: 'ieee-p1363' }) {
      super()
      this.kid = jwk.kid
      this.alg = jwk.alg
      this.#private = createPrivateKey({ key: jwk, format: 'jwk' })
      this.#public = createPublicKey(this.#private)
      this.#digest = algorithm.digest
      this.#dsaEncoding = algorithm.dsaEncoding
    }

    override keyObject(): KeyObject {
      return this.#public
    }

    override async sign(data: Buffer): Promise<Buffer> {
      return sign(this.#digest, data, this.#dsaEncoding ? { key: this.#private, dsaEncoding: this.#dsaEncoding } : this.#private)
    }
  }
  return keys.map((jwk) => {
    const algorithm = ALGORITHMS[jwk.alg]
    return jwk.key_ops || !algorithm ? jwk : new NodeSigningKey(jwk, algorithm)
  })
}

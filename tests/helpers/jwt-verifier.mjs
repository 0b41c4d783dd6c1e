// An independent verifier, as an app in another process would be: it knows only the JWKS URL.
// Usage: node jwt-verifier.mjs <jwksURL> <token> <issuer> <audience> <nowMs>
// Prints {ok, payload, header} or {ok: false, code, message} as one JSON line.
import { createRemoteJWKSet, jwtVerify } from 'jose'

const [jwksURL, token, issuer, audience, now] = process.argv.slice(2)
try {
  const jwks = createRemoteJWKSet(new URL(jwksURL))
  const { payload, protectedHeader } = await jwtVerify(token, jwks, { issuer, audience, currentDate: new Date(Number(now)) })
  process.stdout.write(`${JSON.stringify({ ok: true, payload, header: protectedHeader })}\n`)
} catch (error) {
  process.stdout.write(`${JSON.stringify({ ok: false, code: error.code ?? null, message: error.message })}\n`)
}

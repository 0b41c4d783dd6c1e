/**
 * The physical limit: bare node:http answering fixed JSON, with exactly one native scrypt (the
 * spec's parameters) per sign-in and sign-up. Nothing can be faster and still hash passwords.
 * Usage: node bin/run-ts.js bench/bare-server.ts <port>
 */
import { createServer } from 'node:http'
import { hashPassword, verifyPassword } from '../server/crypto/password.js'

const port = Number(process.argv[2] ?? 4391)
const storedHash = await hashPassword('bench-password-123')
// The same answer, field for field, as a real get-session (session row + user row), so the
// comparison measures the work, not the size of the answer. bench/run.ts checks the fields against
// Gatehouse's own answer before it measures.
const now = new Date().toISOString()
const session = JSON.stringify({
  session: {
    id: 'i'.repeat(32),
    token: 't'.repeat(32),
    userId: 'u'.repeat(32),
    expiresAt: now,
    ipAddress: '127.0.0.1',
    userAgent: 'node',
    createdAt: now,
    updatedAt: now,
    impersonatedBy: null,
    activeOrganizationId: null,
    activeTeamId: null,
  },
  user: {
    id: 'u'.repeat(32),
    name: 'Bench',
    email: 'bench@example.com',
    emailVerified: false,
    image: null,
    createdAt: now,
    updatedAt: now,
    username: null,
    displayUsername: null,
    role: 'user',
    banned: false,
    banReason: null,
    banExpires: null,
    twoFactorEnabled: false,
  },
})

createServer((req, res) => {
  const chunks: Buffer[] = []
  req.on('data', (c: Buffer) => chunks.push(c))
  req.on('end', async () => {
    const path = (req.url ?? '').split('?')[0]
    res.setHeader('content-type', 'application/json')
    if (path === '/api/auth/ok') return res.end('{"ok":true}')
    if (path === '/api/auth/get-session') return res.end(session)
    if (path === '/api/auth/sign-in/email' || path === '/api/auth/sign-up/email') {
      const body = JSON.parse(Buffer.concat(chunks).toString() || '{}') as { password?: string }
      if (path.endsWith('sign-in/email')) await verifyPassword(storedHash, body.password ?? '')
      else await hashPassword(body.password ?? '')
      return res.end(session)
    }
    res.statusCode = 404
    res.end('{}')
  })
}).listen(port, '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${port}/api/auth`))

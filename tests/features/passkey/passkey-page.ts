// Bundled by tests/features/passkey/passkey.panel.test.ts for the test page: the official client with the official
// passkeyClient (which drives navigator.credentials through @simplewebauthn/browser).
import { passkeyClient } from '@better-auth/passkey/client'
import { createAuthClient } from 'better-auth/client'

const auth = createAuthClient({ baseURL: location.origin, plugins: [passkeyClient()] })
;(window as unknown as { auth: typeof auth }).auth = auth
document.body.dataset.ready = 'true'

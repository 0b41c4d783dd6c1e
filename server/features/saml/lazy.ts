let loaded: Promise<typeof import('./protocol.js')> | null = null

/** The SAML protocol code (protocol.ts), loaded at its first use. */
export const samlProtocol = (): Promise<typeof import('./protocol.js')> => {
  loaded ??= import('./protocol.js')
  return loaded
}
